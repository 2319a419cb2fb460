import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, open, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import { TaskStatus, type BaseTaskOutput } from '../schemas/tasks.js';
import { check, describeIssues } from '../schemas/validator.js';
import { fullInputSchema } from '../supervisor/tasks/base-fields.js';
import { identityVariables, taskEnvironment } from '../supervisor/tasks/engines/task-environment.js';
import { RUNNER } from '../runner/runner-file.js';
import { anonymousName, formatTaskId, normalizeSourceTasks, relativeTaskPath, taskDirOf } from '../supervisor/tasks/records/task-ids.js';
import { nowIso, TASK_FILES, writeJsonAtomic } from '../core/task-record/record-files.js';
import type { DefinitionFields } from '../runner/task-sdk.js';
import { splitArgs } from './cli-args.js';
import { EXIT, runCommand, UsageError } from './cli-errors.js';
import { checkRequired, parseFields, parseJsonArguments } from './field-values.js';
import { parameterLines } from './job-help.js';
import { loadTaskModule, pickDefinition } from './task-module.js';
import { statusLine } from './text-output.js';

const USAGE = `usage: taskyard task run PLUGIN [--task NAME] [--input value ...] [--workspace DIR]

Runs one Task of a plugin here, without a service. PLUGIN is the plugin's directory (its
package.json names the Tasks in taskyard.tasks), its task module (the compiled .js) or its
manifest of command Tasks (taskyard.yaml). It writes the queued record into a workspace
(--workspace DIR, default a new temporary directory, kept so the files can be inspected), starts
the same task runner the service starts, then prints the Task's status, log and artifacts. Inputs
are flags, as for submit, checked against the Task's input schema before anything starts
(\`taskyard task run PLUGIN --help\` lists them). Exit code 0 when the Task succeeded, 1 when it
failed, 2 on a usage error.`;

/** The queued record, as `submit` writes it, so the runner sees exactly what the service gives it. */
async function writeQueued(workspace: string, def: DefinitionFields, config: Record<string, unknown> & { task_name: string }): Promise<{ dir: string; status: TaskStatus }> {
  const parts = { type: def.task_type, registration: def.name, name: config.task_name };
  const id = formatTaskId(parts);
  const dir = taskDirOf(workspace, id, parts);
  await mkdir(dir, { recursive: true });
  // Every other field is the schema's default (queued, no pid, no steps, exit code 0, ...).
  const status: TaskStatus = {
    ...(Value.Create(TaskStatus) as TaskStatus),
    task_id: id,
    run_id: randomUUID().replaceAll('-', ''),
    task_type: parts.type,
    task_name: def.name,
    config,
    created_at: nowIso(),
    log_path: relativeTaskPath(parts, id, TASK_FILES.log),
  };
  await writeJsonAtomic(join(dir, TASK_FILES.status), status);
  return { dir, status };
}

/** Starts the runner with the identity variables the service's executor passes; resolves with its exit code. */
async function runRunner(workspace: string, dir: string, status: TaskStatus, def: DefinitionFields, module: string): Promise<number | null> {
  const log = await open(join(dir, TASK_FILES.log), 'a');
  try {
    const identity = { workspace, dir, taskId: status.task_id, runId: status.run_id, taskType: status.task_type, registration: def.name, module };
    const env = taskEnvironment(identityVariables(identity));
    const child = spawn(process.execPath, [RUNNER], { cwd: dir, stdio: ['ignore', log.fd, log.fd], env });
    // Ctrl-C stops the Task, not just this command.
    const forward = () => child.kill('SIGTERM');
    process.once('SIGINT', forward);
    return await new Promise<number | null>((done, fail) => {
      child.once('error', fail);
      child.once('exit', (code) => {
        process.off('SIGINT', forward);
        done(code);
      });
    });
  } finally {
    await log.close();
  }
}

/** Status line, log, result and artifacts (with their files' paths), for a person. */
async function report(workspace: string, dir: string, exitCode: number | null): Promise<number> {
  const status = JSON.parse(await readFile(join(dir, TASK_FILES.status), 'utf8')) as TaskStatus;
  const logText = await readFile(join(dir, TASK_FILES.log), 'utf8').catch(() => '');
  console.log(`── log (${join(dir, TASK_FILES.log)})`);
  process.stdout.write(logText.endsWith('\n') || logText === '' ? logText : `${logText}\n`);
  const { artifacts, ...result } = status.result as Partial<BaseTaskOutput>;
  if (Object.keys(result).length) console.log(`── result\n${JSON.stringify(result, null, 2)}`);
  const entries = Object.entries(artifacts ?? {});
  if (entries.length) console.log(`── artifacts\n${entries.map(([name, a]) => `${name}: ${join(dir, a.path)} (${a.size} bytes, sha256 ${a.sha256})`).join('\n')}`);
  console.log(`── status\n${statusLine(status)}`);
  console.log(`workspace: ${workspace}`);
  if (status.state === 'succeeded') return EXIT.success;
  if (status.state !== 'failed' && status.state !== 'cancelled') console.log(`the runner exited with code ${exitCode} without a final status`);
  return EXIT.failure;
}

/** `taskyard task run PLUGIN --task NAME ...`: returns the exit code. */
export function taskRunCommand(argv: string[]): Promise<number> {
  return runCommand('taskyard task', USAGE, async () => {
    const { job: action, options, fields } = splitArgs(argv);
    const [modulePath, ...inputs] = fields;
    const noModule = modulePath === undefined || modulePath.startsWith('-');
    if (options.help && (action !== 'run' || noModule)) {
      console.log(USAGE);
      return EXIT.success;
    }
    if (action !== 'run') throw new UsageError(action === undefined ? 'name an action: run' : `unknown action ${JSON.stringify(action)}`);
    if (noModule) throw new UsageError('name the plugin to run: its directory, its task module (the compiled .js) or its manifest (taskyard.yaml)');
    const { file, definitions } = await loadTaskModule(modulePath);
    const taskAt = inputs.findIndex((t) => t === '--task' || t.startsWith('--task='));
    const taskName = taskAt === -1 ? undefined : (inputs[taskAt]!.split('=')[1] ?? inputs[taskAt + 1]);
    const rest = taskAt === -1 ? inputs : inputs.filter((_, i) => i !== taskAt && (i !== taskAt + 1 || inputs[taskAt]!.includes('=')));
    const def = pickDefinition(definitions, taskName);
    const schema = fullInputSchema(def.input_schema);
    const job = { name: `task run ${modulePath} --task ${def.name}`, description: def.description, input_schema: schema };
    if (options.help) {
      console.log(`usage: taskyard ${job.name} [--input value ...]\n\n${def.description}\n\nInputs:\n${parameterLines(job).join('\n')}`);
      return EXIT.success;
    }
    let config: Record<string, unknown>;
    try {
      const args = parseFields(rest, schema, parseJsonArguments(options.json));
      checkRequired(args, schema);
      const parsed = check(schema, args, { defaults: true });
      if (!parsed.ok) throw new UsageError(`invalid input for task ${def.name}: ${describeIssues(parsed.issues)}`);
      config = parsed.value as Record<string, unknown>;
      config['source_tasks'] = normalizeSourceTasks(String(config['source_tasks'] ?? '')).join(',');
    } catch (err) {
      if (err instanceof UsageError) err.message += `\n\nInputs of ${def.name}:\n${parameterLines(job).join('\n')}`;
      throw err;
    }
    const name = typeof config['task_name'] === 'string' && config['task_name'] !== '' ? config['task_name'] : anonymousName();
    const workspace = options.workspace !== undefined ? resolve(options.workspace) : await mkdtemp(join(tmpdir(), 'taskyard-task-run-'));
    const { dir, status } = await writeQueued(workspace, def, { ...config, task_name: name });
    console.log(`running ${status.task_id} from ${file}`);
    return report(workspace, dir, await runRunner(workspace, dir, status, def, file));
  });
}
