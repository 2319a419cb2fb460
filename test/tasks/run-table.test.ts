import t from 'tap';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskStatus } from '../../schemas/tasks.js';
import { TASK_FILES, writeJsonAtomic } from '../../core/task-record/record-files.js';
import type { Executor, Runner, RunnerEnd } from '../../supervisor/tasks/engines/executor.js';
import { TaskIndex } from '../../supervisor/tasks/records/task-index.js';
import { formatTaskId, taskDirOf } from '../../supervisor/tasks/records/task-ids.js';
import { LeaseFile } from '../../supervisor/tasks/runs/lease-file.js';
import { ResourcePool } from '../../supervisor/tasks/runs/resource-pool.js';
import { RunTable } from '../../supervisor/tasks/runs/run-table.js';
import { waitFor } from '../helpers/wait-for.js';
import { MEMORY_ROOT } from '../helpers/memory-dir.js';

/**
 * An engine at the executor seam whose runners end when the test says (or when stopped): the run
 * table's admission is what is under test, not a process.
 */
class HeldRunners implements Executor {
  readonly kind = 'local';
  readonly queuesRuns = false;
  readonly started: string[] = [];
  readonly #ends = new Map<string, (end: RunnerEnd) => void>();
  readonly #runIds = new Map<Runner, string>();

  async start(spec: { runId: string }): Promise<Runner> {
    this.started.push(spec.runId);
    const ended = new Promise<RunnerEnd>((resolve) => this.#ends.set(spec.runId, resolve));
    const runner = { pid: null, ended };
    this.#runIds.set(runner, spec.runId);
    return runner;
  }

  end(runId: string, end: RunnerEnd): void {
    this.#ends.get(runId)?.(end);
  }

  async adopt(): Promise<Map<string, Runner>> {
    return new Map();
  }

  async stop(runner: Runner): Promise<void> {
    this.end(this.#runIds.get(runner)!, { kind: 'exited', code: null, signal: 'SIGTERM' });
  }

  close(): void {}
}

t.test('a run cancelled while queued gives up its turn: the next one starts when the slot frees, even before the cancel settles', async (t) => {
  const workspace = await mkdtemp(join(MEMORY_ROOT, 'taskyard-run-table-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const index = new TaskIndex(workspace);
  const executor = new HeldRunners();
  const closing = new AbortController();
  t.teardown(() => closing.abort());
  const pool = new ResourcePool({ cpus: 4, gpus: 0, gpuVendor: 'nvidia' });
  const table = new RunTable({ index, executor, pool, leaseFile: new LeaseFile(join(workspace, 'leases.json')), workspace, closing: closing.signal, maxRunning: 1, definitionOf: () => undefined });

  const submit = async (name: string) => {
    const parts = { type: 'fixture', registration: 'fixture', name };
    const id = formatTaskId(parts);
    const dir = taskDirOf(workspace, id, parts);
    const status: TaskStatus = { task_id: id, run_id: `run-${name}`, task_type: parts.type, task_name: 'fixture', config: {}, state: 'queued', pid: null, created_at: new Date().toISOString(), started_at: null, finished_at: null, steps: [], result: {}, error: '', exit_code: 0, log_path: `${parts.type}/${id}/${TASK_FILES.log}` };
    await mkdir(dir, { recursive: true });
    await writeJsonAtomic(join(dir, TASK_FILES.status), status);
    return table.submit({ id, parts, dir, runId: status.run_id, registration: 'fixture', module: '', resources: {}, attempt: 1, earlier: [] }, status);
  };
  const a = await submit('a');
  const b = await submit('b');
  const c = await submit('c');
  t.equal(index.get(b.id)?.status?.state, 'queued', 'the index shows the queued record the run was given');
  await waitFor(() => executor.started.includes('run-a'), 5000, 'a to start');
  t.same(executor.started, ['run-a'], 'one slot');

  // The slot frees while the cancel of the queued head is still settling its record.
  executor.end('run-a', { kind: 'exited', code: 0, signal: null });
  const cancelled = table.cancel(b.id);
  t.equal(b.phase, 'ended', 'a queued run ends at its cancel');
  await waitFor(() => executor.started.includes('run-c'), 5000, 'c to start in the freed slot');
  t.same(executor.started, ['run-a', 'run-c'], 'the cancelled run never started');
  t.equal(await cancelled, true);
  t.equal((await b.published)?.state, 'cancelled');
  t.equal((await a.published)?.state, 'failed', 'a ended without a terminal record');

  t.equal(await table.cancel(c.id), true);
  t.equal((await c.published)?.state, 'cancelled');
  t.equal(table.activeCount(), 0);
});
