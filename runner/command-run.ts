/**
 * Runs a command Task: the command is the runner's child, started without a shell in the Task's
 * environment, with stdout on task.log, stderr passed through to task.log (its last line kept for
 * the error), and the Task protocol channel at PROTOCOL_FD. The runner stays the record's owner;
 * the command reports through the channel (runner/task-protocol.ts) and its exit code gives the
 * state. The child shares the runner's process group and run mark, so a cancel ends both.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { constants } from 'node:os';
import { writeAllSync } from '../core/task-record/record-files.js';
import { PROTOCOL_ENV, PROTOCOL_FD, ReportLines, TASK_PROTOCOL_VERSION } from './task-protocol.js';
import type { RunReports } from './run-reports.js';
import { TaskError } from './task-sdk.js';
import { clockTicksNow, endLeftovers, lastPid } from './leftovers.js';

/** What to run: argv (no shell), its working directory, and variables over the runner's own. */
export interface CommandSpec {
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

/**
 * How long the channel and stderr may stay open once the command exited: a process it left in the
 * background may hold them, and the run must not wait on it (its lines after that are not read).
 */
const DRAIN_MS = 500;
/** Bytes of stderr kept to find its last line. */
const STDERR_TAIL = 4096;

/** A failure of the command: `<type>: <message>` without the runner's stack, which says nothing here. */
function commandFailure(type: string, message: string, exitCode: number): TaskError {
  const err = new TaskError(type, message, Math.min(255, Math.max(1, exitCode)));
  err.stack = '';
  return err;
}

/** The last non-empty line of what the command wrote on stderr (at most 300 characters). */
function lastLine(tail: Buffer): string {
  const lines = tail.toString('utf8').split('\n').map((l) => l.trim()).filter(Boolean);
  const line = lines.at(-1) ?? '';
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/**
 * The exception a Python process died of, read from the end of its stderr: the traceback's last
 * line `<ExceptionType>: <message>`. A script that never imported taskyard_task still fails with
 * the same error text as one that did.
 */
function pythonException(tail: Buffer): { type: string; message: string } | undefined {
  if (!tail.toString('utf8').includes('Traceback (most recent call last):')) return undefined;
  const match = /^([A-Za-z_][\w.]{0,99})(?:: ?(.*))?$/.exec(lastLine(tail));
  return match ? { type: match[1]!.split('.').at(-1)!, message: match[2] ?? '' } : undefined;
}

/** Resolves once the stream ended, or after `ms`: whichever comes first. */
function endedWithin(stream: Readable | null | undefined, ms: number): Promise<void> {
  if (!stream || stream.readableEnded || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    stream.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The command's exit (code and signal), or the error that kept it from starting. */
function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null } | { error: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    child.once('error', (error: NodeJS.ErrnoException) => resolve({ error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

function startFailure(argv0: string, error: NodeJS.ErrnoException): TaskError {
  if (error.code === 'ENOENT') return commandFailure('FileNotFoundError', `command not found: ${argv0}`, 127);
  if (error.code === 'EACCES') return commandFailure('PermissionError', `command is not executable: ${argv0}`, 126);
  return commandFailure('OSError', `command could not start: ${argv0}: ${error.message}`, 126);
}

/**
 * Runs the command to its end, its reports applied as they come. Resolves when it exited 0 and
 * reported no error; otherwise rejects with the failure the status records: the reported error,
 * or the exit code (or signal) with the last line of stderr.
 */
export async function runCommand(spec: CommandSpec, reports: RunReports, logFd: number, inputsFile: string): Promise<void> {
  const argv0 = spec.argv[0]!;
  let cwdIsDir = false;
  try {
    cwdIsDir = statSync(spec.cwd).isDirectory();
  } catch {
    // Said below.
  }
  if (!cwdIsDir) throw commandFailure('FileNotFoundError', `working directory not found: ${spec.cwd}`, 1);
  const since = clockTicksNow();
  const startedAt = Date.now();
  const child = spawn(argv0, spec.argv.slice(1), {
    cwd: spec.cwd,
    // Python writes to a file in blocks: unbuffered, its prints reach the log as they are made.
    env: { PYTHONUNBUFFERED: '1', ...process.env, ...spec.env, [PROTOCOL_ENV.fd]: String(PROTOCOL_FD), [PROTOCOL_ENV.version]: String(TASK_PROTOCOL_VERSION), [PROTOCOL_ENV.inputs]: inputsFile },
    stdio: ['ignore', logFd, 'pipe', 'pipe'],
  });
  const exited = exitOf(child);
  const lastAtStart = lastPid();

  // Reports are applied one after another, in the order they were written (an artifact is hashed before the next).
  let applied = Promise.resolve();
  const refused = (why: string) => reports.log('warning', `ignored a Task protocol line: ${why}`);
  const lines = new ReportLines(
    (report) => {
      applied = applied.then(() => reports.apply(report)).catch((err: unknown) => refused(err instanceof Error ? err.message : String(err)));
    },
    refused,
  );
  const channel = child.stdio[PROTOCOL_FD] as Readable | null;
  channel?.on('data', (chunk: Buffer) => lines.push(chunk));
  channel?.on('end', () => lines.end());
  channel?.on('error', () => undefined);

  let tail = Buffer.alloc(0);
  child.stderr?.on('data', (chunk: Buffer) => {
    writeAllSync(logFd, chunk);
    tail = Buffer.concat([tail, chunk]).subarray(-STDERR_TAIL);
  });
  child.stderr?.on('error', () => undefined);

  const end = await exited;
  await Promise.all([endedWithin(channel, DRAIN_MS), endedWithin(child.stderr, DRAIN_MS)]);
  channel?.destroy();
  child.stderr?.destroy();
  // The run ends with its command: what it left running (a server started with `&`, a daemon) is
  // ended now, before anything below can fail (a pooled runner serves its next run only after this).
  const runId = process.env['TASKYARD_RUN_ID'];
  const ended = !runId || child.pid === undefined || (await endLeftovers(`TASKYARD_RUN_ID=${runId}`, { since, startedAt, firstPid: child.pid, lastAtStart }));
  await applied;
  if (!ended) reports.log('warning', 'processes the command left could not all be ended');
  reports.endOpenSteps();

  if ('error' in end) throw startFailure(argv0, end.error);
  const { code, signal } = end;
  const exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0);
  if (reports.error) throw commandFailure(reports.error.type, reports.error.message, exitCode === 0 ? 1 : exitCode);
  if (exitCode === 0) return;
  const raised = code === 1 ? pythonException(tail) : undefined;
  if (raised) throw commandFailure(raised.type, raised.message, exitCode);
  const said = lastLine(tail);
  const how = signal ? `the command was killed by ${signal}` : `the command exited with code ${code}`;
  throw commandFailure('CommandError', `${how}${said ? `: ${said}` : ''}`, exitCode);
}
