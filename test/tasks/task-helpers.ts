import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { MEMORY_ROOT } from '../helpers/memory-dir.js';
import { startTestService, waitFor, type TestService, type TestServiceOptions } from '../helpers/service.js';
import type { TaskHandle, TaskStatus } from '../../schemas/tasks.js';
export { groupGone, isRunning, killTaskProcesses } from '../helpers/task-processes.js';

/** What submit answers. */
export type Handle = TaskHandle;

/**
 * The real service; its teardown already kills any Task process a test left running. Its workspace,
 * unless the test gives one, is a `makeWorkspace`: in memory, where the records every run writes
 * (each fsynced) cost no disk flush. Nothing a Task test checks depends on the disk under it (the
 * full-disk tests mount a tmpfs of their own).
 */
export async function startTaskService(t: Test, opts: TestServiceOptions = {}): Promise<TestService> {
  return startTestService(t, { ...opts, workspace: opts.workspace ?? (await makeWorkspace(t)) });
}

/**
 * A temporary workspace in memory (test/helpers/memory-dir.ts) removed at the end of the test;
 * removed synchronously: some hold thousands of records, and one blocking call per entry costs
 * far less CPU than the promise and thread-pool round trips of the asynchronous removal.
 */
export async function makeWorkspace(t: Test): Promise<string> {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-tasks-'));
  t.teardown(() => rmSync(workspace, { recursive: true, force: true }));
  return workspace;
}

export async function submitOk(t: Test, svc: TestService, args: Record<string, unknown>): Promise<Handle> {
  const res = await svc.call('submit', args);
  t.equal(res.status, 200, 'submit answers 200');
  t.equal(res.body.success, true, `submit ${JSON.stringify(args)} succeeds: ${JSON.stringify(res.body.answer)}`);
  return res.body.answer;
}

export type Status = TaskStatus;

export async function waitTask(svc: TestService, handle: Handle): Promise<{ success: boolean; status: Status }> {
  const res = await svc.call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  return { success: res.body.success, status: res.body.answer };
}

/** Submit → wait_task; a run that does not succeed fails the test. */
export async function runToEnd(t: Test, svc: TestService, args: Record<string, unknown>): Promise<Handle> {
  const handle = (await svc.call('submit', args)).body.answer;
  const done = await waitTask(svc, handle);
  if (done.status.state !== 'succeeded') t.fail(`expected succeeded, got ${JSON.stringify(done.status)}`);
  return handle;
}

export async function statusOf(svc: TestService, taskId: string): Promise<Status> {
  return (await svc.call('status', { task_id: taskId })).body.answer;
}

/** Waits (bounded) until the Task reaches `state`. */
export async function waitState(svc: TestService, taskId: string, state: string, ms = 15_000): Promise<Status> {
  return waitFor(async () => {
    const status = await statusOf(svc, taskId);
    return status.state === state ? status : null;
  }, ms, `${taskId} to be ${state}`);
}

const PLUGIN_TASKS = `
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask, TaskError } from 'taskyard/task';

// Output of plugin code must not confuse the describer (in a run it would land in task.log).
if (!process.env.TASKYARD_TASK_DIR) console.log('plugin module loaded');

export default [
  defineTask({
    name: 'echo-log',
    taskType: 'fixture',
    description: 'Writes the given text to the task log, repeated, waiting between writes.',
    input: { type: 'object', properties: { text: { type: 'string' }, repeat: { type: 'integer', default: 1 }, pause: { type: 'number', default: 0 } }, required: ['text'] },
    output: { type: 'object', properties: { bytes: { type: 'integer' } } },
    async run(input) {
      for (let i = 0; i < input.repeat; i++) {
        process.stdout.write(input.text);
        if (input.pause) await delay(input.pause * 1000);
      }
      return { bytes: Buffer.byteLength(input.text) * input.repeat };
    },
  }),
  {
    name: 'stubborn',
    task_type: 'fixture',
    description: 'A plain-object definition: starts a child ignoring SIGTERM and one that leaves the process group.',
    input_schema: { type: 'object', properties: {} },
    output_schema: { type: 'object', properties: {} },
    async run(input, ctx) {
      const ignoring = spawn('sh', ['-c', 'trap "" TERM; while :; do sleep 1; done'], { stdio: 'ignore' });
      const escaped = spawn('sleep', ['300'], { stdio: 'ignore', detached: true });
      ctx.logger.info('pids ' + ignoring.pid + ' ' + escaped.pid);
      await delay(300000);
      return {};
    },
  },
  defineTask({
    name: 'artifacts',
    taskType: 'fixture',
    description: 'Writes a file, registers it as an artifact and returns a non-finite number.',
    input: { type: 'object', properties: { escape: { type: 'boolean', default: false } } },
    output: { type: 'object', properties: { ratio: { type: ['number', 'null'] }, nested: { type: 'object' } } },
    async run(input, ctx) {
      writeFileSync('out.txt', 'hello artifact\\n');
      await ctx.artifact('greeting', 'out.txt');
      if (input.escape) {
        symlinkSync('/etc/hostname', 'link.txt');
        await ctx.artifact('bad', 'link.txt');
      }
      return { ratio: Number.NaN, nested: { values: [1, Number.POSITIVE_INFINITY] } };
    },
  }),
  defineTask({
    name: 'many-steps',
    taskType: 'fixture',
    description: 'Runs the given number of empty steps, each with a progress percentage.',
    input: { type: 'object', properties: { steps: { type: 'integer' } }, required: ['steps'] },
    output: { type: 'object', properties: { steps: { type: 'integer' } } },
    async run(input, ctx) {
      for (let i = 0; i < input.steps; i++) await ctx.step('step-' + i, () => ctx.progress(100));
      return { steps: input.steps };
    },
  }),
  defineTask({
    name: 'hostile-files',
    taskType: 'fixture',
    description: 'Replaces its events.jsonl with a directory, then keeps reporting steps for a while, or until a file appears in its directory.',
    input: { type: 'object', properties: { seconds: { type: 'number', default: 1 }, until_file: { type: 'string' } } },
    output: { type: 'object', properties: {} },
    async run(input, ctx) {
      rmSync('events.jsonl', { force: true });
      mkdirSync('events.jsonl');
      const until = Date.now() + input.seconds * 1000;
      for (let i = 0; Date.now() < until && !(input.until_file && existsSync(input.until_file)); i++) {
        await ctx.step('tick-' + i, () => delay(50));
        ctx.logger.info('tick ' + i);
      }
      return {};
    },
  }),
  defineTask({
    name: 'custom-exit',
    taskType: 'fixture',
    description: 'Fails with a custom exit code through TaskError.',
    input: { type: 'object', properties: {} },
    output: { type: 'object', properties: {} },
    async run() {
      throw new TaskError('ValueError', 'custom failure', 7);
    },
  }),
];
`;

/** Installs the fixture plugin package (and `extra`) into the workspace's plugin prefix (before the service starts). */
export async function writeFixturePlugin(workspace: string, extra: { name: string; tasks: string } | null = null): Promise<void> {
  const write = async (name: string, tasks: string) => {
    const dir = join(workspace, '.taskyard', 'plugins', 'node_modules', name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', taskyard: { tasks: './tasks.js' } }));
    await writeFile(join(dir, 'tasks.js'), tasks);
  };
  await write('taskyard-fixture', PLUGIN_TASKS);
  if (extra) await write(extra.name, extra.tasks);
  // The prefix's package.json is the list of installed plugins, as after `install_plugin`.
  const names = ['taskyard-fixture', ...(extra ? [extra.name] : [])];
  await writeFile(join(workspace, '.taskyard', 'plugins', 'package.json'), JSON.stringify({ private: true, dependencies: Object.fromEntries(names.map((n) => [n, '1.0.0'])) }));
}
