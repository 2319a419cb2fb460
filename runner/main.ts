/**
 * Task runner: the child process of one Task run. Started detached (its own process group) by the
 * supervisor with the identity in TASKYARD_TASK_* variables and stdout/stderr on `task.log`.
 * While it lives it owns the record; on success the order is output → exit code → metadata →
 * `succeeded` (spec: TaskMetadata). Kept to node built-ins and a few small modules: every
 * millisecond of import time is paid by every submit, which is also why the build bundles it into
 * one CommonJS file (`runner-main.cjs`, see bundle.mjs): loading this as several ES modules costs
 * ~8 ms. The entry `runner.cjs` runs it from V8's code cache (see runner-loader.ts).
 */
import { closeSync, readFileSync } from 'node:fs';
import { openAppendFileSync } from '../workers/safe-file.js';
import { describeError } from '../core/errors.js';
import { delimiter, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TaskStatus } from '../schemas/tasks.js';
import { restoreExtraCaCerts } from './extra-ca-certs.js';
import { buildOutput } from './output-check.js';
import { isTerminal, TASK_FILES, TASK_REPORT_FILES, writeJsonAtomicSync } from '../core/task-record/record-files.js';
import { StatusPublisher } from './status-publisher.js';
import { createTaskContext } from './task-context.js';
import { takeRun } from './take-run.js';
import { becomeRunAsUser } from './run-as.js';
import { importModule } from './import-module.js';
import { definitionsOfModule, normalizeTask, TaskError } from './task-sdk.js';
import { isCommandTask, isManifestFile, readManifest, type AnyTaskDefinition } from './command-tasks.js';
import { RunReports } from './run-reports.js';
import { endLeftovers, spanFromNow } from './leftovers.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`task runner: ${name} is not set`);
  return value;
}

/** Where the Python helper (`import taskyard_task`) lives: `python/` at the package root. */
const PYTHON_HELPER_DIR = resolve(dirname(process.argv[1] ?? '.'), '..', '..', 'python');

async function loadDefinition(registration: string, moduleFile: string): Promise<AnyTaskDefinition> {
  if (moduleFile === '') {
    const builtin = (await import('./builtins.js')).BUILTIN_TASKS.find((d) => d.name === registration);
    if (builtin) return builtin;
  } else if (isManifestFile(moduleFile)) {
    const declared = (await readManifest(moduleFile)).find((d) => d.name === registration);
    if (declared) return declared;
  } else {
    for (const candidate of definitionsOfModule(await importModule<Record<string, unknown>>(pathToFileURL(moduleFile).href))) {
      const def = normalizeTask(candidate);
      if (def.name === registration) return def;
    }
  }
  throw new TaskError('KeyError', `task ${registration} is no longer provided by ${moduleFile || 'the built-ins'}`);
}

/** `<Type>: <message>` (as a Job's failure reads) and the exit code: 1 unless the Task chose one. */
function describeFailure(err: unknown): { error: string; exit_code: number } {
  return { error: describeError(err), exit_code: err instanceof TaskError ? Math.min(255, Math.max(1, err.exitCode)) : 1 };
}

/** What the runner holds of the run it serves now: what a failure, caught anywhere, needs to record it. */
interface CurrentRun {
  publisher?: StatusPublisher;
  reports?: RunReports;
  logFd?: number;
  /** Its terminal status was written or tried: a later failure changes nothing. */
  finished: boolean;
  /** Its terminal status is written (a runner may serve another run only then). */
  recorded: boolean;
  /** A command run ended what its command left, before its record (command-run.ts): not looked for again. */
  leftoversEnded?: boolean;
}

let current: CurrentRun = { finished: false, recorded: false };

/**
 * Records a failure; answers the exit code. When even that write fails (a full disk), the runner
 * exits without a terminal status and the service settles the record: it says why in the log.
 */
function recordFailure(err: unknown): number {
  if (current.finished) return 1;
  current.finished = true;
  const failure = describeFailure(err);
  process.stderr.write(`${failure.error}\n${err instanceof Error && err.stack ? `${err.stack}\n` : ''}`);
  try {
    current.reports?.close();
    current.publisher?.finish({ state: 'failed', result: {}, ...failure });
    current.recorded = current.publisher !== undefined;
  } catch (writeErr) {
    process.stderr.write(`task runner: the failed status could not be written: ${(writeErr as Error).message}\n`);
  }
  return failure.exit_code;
}

/** Records a failure and exits. */
function fail(err: unknown): never {
  process.exit(recordFailure(err));
}

process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

/**
 * Why this runner must not run, if so. A runner that starts late (a Slurm job the service already
 * gave up on and cancelled, a run settled while its runner was on its way) must not write
 * `running` over the record the service settled, nor over the record of a newer run in the same
 * directory: it leaves without a write.
 */
function staleRun(status: TaskStatus): string | undefined {
  const runId = process.env['TASKYARD_RUN_ID'];
  if (!isTerminal(status.state) && (runId === undefined || status.run_id === runId)) return undefined;
  return `task runner: run ${runId ?? '?'} is not this Task's live run (its record says run ${status.run_id}, ${status.state}); nothing was started\n`;
}

/** Runs the Task of the run just taken to its terminal record; answers the exit code. */
async function runOnce(acknowledge: (startedAt: string | null) => void): Promise<number> {
  const dir = required('TASKYARD_TASK_DIR');
  let status: TaskStatus;
  let publisher: StatusPublisher;
  try {
    status = JSON.parse(readFileSync(join(dir, TASK_FILES.status), 'utf8')) as TaskStatus;
    const stale = staleRun(status);
    if (stale) {
      current.finished = true;
      acknowledge(null);
      process.stderr.write(stale);
      process.exit(1);
    }
    publisher = current.publisher = new StatusPublisher(dir, status);
    publisher.markRunning(process.pid);
  } finally {
    // The record says `running` before the service hears it; a failure here is still an answer.
    acknowledge(current.publisher?.status.started_at ?? null);
  }
  // Before any Task code loads: with `service.run_as` it runs as that user from here on.
  becomeRunAsUser(dir);
  const registration = required('TASKYARD_TASK_REGISTRATION');
  const moduleFile = process.env['TASKYARD_TASK_MODULE'] ?? '';
  // Built-in and manifest Tasks open no TLS connection in the runner: only plugin code needs the
  // extra CAs (loading node:tls for them costs ~4 ms per run).
  await restoreExtraCaCerts({ tls: moduleFile !== '' && !isManifestFile(moduleFile) });
  // Every Python process the Task starts can `import taskyard_task` (python/taskyard_task.py).
  process.env['PYTHONPATH'] = [PYTHON_HELPER_DIR, ...(process.env['PYTHONPATH'] ? [process.env['PYTHONPATH']] : [])].join(delimiter);
  const def = await loadDefinition(registration, moduleFile);
  const workspace = required('TASKYARD_WORKSPACE');
  const logFd = (current.logFd = openAppendFileSync(join(dir, TASK_FILES.log)));
  const runReports = (current.reports = new RunReports({ dir, registration, logFd }, publisher));
  const input = { ...status.config };
  let answer: unknown;
  if (isCommandTask(def)) {
    const inputsFile = join(dir, TASK_REPORT_FILES.inputs);
    writeJsonAtomicSync(inputsFile, input, { durable: false });
    // Loaded for command runs only: node:child_process costs a TypeScript Task's start several ms.
    const { runCommand } = await import('./command-run.js');
    try {
      await runCommand(def.command(input, { workspace, dir, inputsFile }), runReports, logFd, inputsFile);
    } finally {
      current.leftoversEnded = true;
    }
    answer = def.answersExitCode ? { ...runReports.output, exit_code: 0 } : runReports.output;
  } else {
    const ctx = createTaskContext({ workspace, registration, taskId: status.task_id, runId: status.run_id, createdAt: status.created_at ?? '' }, runReports);
    answer = await def.run(input, ctx);
  }
  runReports.endOpenSteps();
  runReports.close();
  const output = buildOutput(dir, answer, def.output_schema, runReports.artifacts, isCommandTask(def));
  const exitCode = 0;
  writeJsonAtomicSync(join(dir, TASK_FILES.metadata), {
    task_id: status.task_id,
    reg_name: registration,
    created_at: status.created_at,
    task_type: status.task_type,
    input_params: status.config,
    output_params: output,
  }, { durable: true });
  current.finished = true;
  // Round-trip through JSON so `result` carries the same nulls for non-finite numbers as metadata.
  publisher.finish({ state: 'succeeded', result: JSON.parse(JSON.stringify(output)) as Record<string, unknown>, error: '', exit_code: exitCode });
  current.recorded = true;
  return exitCode;
}

/**
 * One run, or (a pooled runner serving command runs, see take-run.ts and runner-reuse.ts) one
 * after another: a failed command run is recorded here instead of exiting, and the runner goes
 * back to the pool once its run's record is terminal.
 */
async function main(): Promise<void> {
  for (;;) {
    const run = takeRun();
    const span = spanFromNow();
    const exitCode = await runOnce(run.acknowledge).catch(recordFailure);
    // A run ends with its Task: what its code started and left running is ended (a command's
    // leftovers were already, before its record; this is the TypeScript Task's).
    const runId = process.env['TASKYARD_RUN_ID'];
    if (runId && !current.leftoversEnded) await endLeftovers(`TASKYARD_RUN_ID=${runId}`, span);
    if (current.logFd !== undefined) closeSync(current.logFd);
    if (!current.recorded || !(await run.release(exitCode))) process.exit(exitCode);
    current = { finished: false, recorded: false };
  }
}

main().catch(fail);
