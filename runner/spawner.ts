/**
 * The spawner: a small process that starts task runners for the service. `fork()` copies the
 * parent's page tables, so spawning from the service (well over 100 MB resident) blocks its event
 * loop ~15 ms per Task; from this process (~40 MB) it takes ~1.5 ms, off the service's thread.
 *
 * It keeps a few runners started ahead of need (`argv[3]`, default 2): a Node start costs
 * ~25 ms of CPU and ~50 ms of wall time here, so a submit hands its run to a runner that is
 * already up. Each pooled runner is detached (its own process group) and writes to a slot log in
 * the pool directory (`argv[2]`), which it renames onto the run's `task.log` when it takes a run:
 * the descriptor stays, so stdout, stderr and the Task's subprocesses all write to the Task's log.
 * Each runner serves one run and exits; the pool is refilled in the background.
 *
 * Its environment is already the Tasks' base environment. When the service goes away (the IPC
 * channel closes) it exits; idle runners exit with it, and running ones are left alone: a
 * restarted service adopts them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { openAppendFileSync, UnsafeFileError } from '../workers/safe-file.js';
import { RUNNER } from './runner-file.js';
import { NO_RUN_YET, RUN_FLAG, RUNNER_CHANNEL_FD, type RunAssignment, type RunnerEvent, type SpawnerEvent, type SpawnRequest } from './spawner-messages.js';

const poolDir = process.argv[2] ?? '';
const poolSize = Math.max(0, Number(process.argv[3] ?? 2) || 0);
/** After this many runners died before they were ready, in a row, requests fail instead of retrying. */
const MAX_FAILED_STARTS = 3;

interface PooledRunner {
  child: ChildProcess;
  slotLog: string;
  /** Set while a run is handed over: receives the runner's answer. */
  onAnswer: ((event: Exclude<RunnerEvent, { type: 'ready' }>) => void) | undefined;
}

const idle: PooledRunner[] = [];
const waiting: SpawnRequest[] = [];
let starting = 0;
/** Runners handed a run that have not answered yet. */
let assigning = 0;
let slotCounter = 0;
let failedStarts = 0;

function send(event: SpawnerEvent): void {
  if (process.connected) process.send!(event);
}

/** Reports the exit of a runner that took `runId`. */
function reportExit(child: ChildProcess, runId: string): void {
  // A pooled runner's answer can be read after its exit was (a run quicker than this process's turn).
  if (child.exitCode !== null || child.signalCode !== null) send({ type: 'exited', runId, code: child.exitCode, signal: child.signalCode });
  else child.once('exit', (code, signal) => send({ type: 'exited', runId, code, signal }));
}

/** A runner started for one run, writing straight to its log (no pool directory, or a foreign file system). */
function startDirect(req: SpawnRequest): void {
  let logFd: number | undefined;
  try {
    // Opened safely: a link planted as task.log while the run was queued must not send the
    // Task's output outside the workspace, nor a FIFO stop this process.
    logFd = openAppendFileSync(req.logFile);
    const child = spawn(process.execPath, [RUNNER, RUN_FLAG, req.runId], {
      cwd: req.cwd,
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: { ...process.env, ...req.env, TASKYARD_TASK_DIR: req.cwd },
    });
    child.once('error', (err) => send({ type: 'spawn-failed', runId: req.runId, message: err.message }));
    reportExit(child, req.runId);
    if (child.pid !== undefined) send({ type: 'spawned', runId: req.runId, pid: child.pid, startedAt: null });
  } catch (err) {
    const message = err instanceof UnsafeFileError ? `task.log is not a regular file (${err.kind}); it is not written` : (err as Error).message;
    send({ type: 'spawn-failed', runId: req.runId, message });
  } finally {
    if (logFd !== undefined) closeSync(logFd);
  }
}

/**
 * A pooled runner's messages, JSON lines on its fd 3 pipe (see take-run.ts), as events; the
 * first one is `ready`. No Node IPC channel: setting one up costs every runner ~6 ms of CPU.
 */
function listen(child: ChildProcess, onEvent: (event: RunnerEvent) => void): void {
  const channel = child.stdio[RUNNER_CHANNEL_FD] as Readable | null;
  let pending = '';
  channel?.setEncoding('utf8');
  channel?.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      try {
        onEvent(JSON.parse(line) as RunnerEvent);
      } catch {
        // Not a message of the runner's: ignored (only its exit then says how it went).
      }
    }
  });
  channel?.on('error', () => undefined); // the runner's exit says what matters
}

/**
 * Hands a request to a ready runner; it answers accepted (it wrote `running`) or declined (start
 * one directly). The pool is refilled only after that answer: a Node start begun at the same time
 * took the cores the run's own start needed.
 */
function assign(runner: PooledRunner, req: SpawnRequest): void {
  const { child } = runner;
  assigning++;
  const answered = () => {
    assigning--;
    refill();
  };
  // The service hears how the handover went before the refill: starting a Node process blocks
  // this one for its fork and exec (~10 ms here), and the service showed `running` that late.
  const onExit = () => {
    runner.onAnswer = undefined;
    send({ type: 'spawn-failed', runId: req.runId, message: 'the pooled task runner exited before it took the run' });
    answered();
  };
  // 'close', not 'exit': it comes after the channel delivered everything, so an answer written
  // just before a quick exit is never taken for a runner that died first.
  child.once('close', onExit);
  runner.onAnswer = (event) => {
    child.off('close', onExit);
    runner.onAnswer = undefined;
    if (event.type === 'accepted' && child.pid !== undefined) {
      send({ type: 'spawned', runId: req.runId, pid: child.pid, startedAt: event.startedAt });
      reportExit(child, req.runId);
    } else startDirect(req);
    answered();
  };
  const assignment: RunAssignment = { ...req, type: 'run' };
  (child.stdio[RUNNER_CHANNEL_FD] as Writable).write(`${JSON.stringify(assignment)}\n`);
}

/** Starts one pooled runner; once ready it takes the oldest waiting request or waits idle. */
function startPooled(): void {
  const slotLog = join(poolDir, `${process.pid}-${++slotCounter}.log`);
  let fd: number | undefined;
  try {
    fd = openSync(slotLog, 'w', 0o644);
    const child = spawn(process.execPath, [RUNNER, RUN_FLAG, NO_RUN_YET, '--slot-log', slotLog], {
      // Not the pool directory: a runner whose working directory vanished while it started (a
      // workspace removed) hung for good in Node's start-up when NODE_OPTIONS preloads modules.
      cwd: '/',
      detached: true,
      stdio: ['ignore', fd, fd, 'pipe'],
      env: process.env,
    });
    starting++;
    const runner: PooledRunner = { child, slotLog, onAnswer: undefined };
    let ready = false;
    child.once('error', () => undefined); // reported through 'exit'
    child.once('exit', () => {
      const i = idle.indexOf(runner);
      if (i >= 0) idle.splice(i, 1);
      if (ready) return;
      starting--;
      rmSync(slotLog, { force: true });
      // A runner that cannot even start would be restarted forever: fail what waits instead.
      if (++failedStarts >= MAX_FAILED_STARTS) {
        for (const req of waiting.splice(0)) send({ type: 'spawn-failed', runId: req.runId, message: 'task runners exit before they are ready (see the service log)' });
      }
      refill();
    });
    listen(child, (event) => {
      if (event.type !== 'ready') return runner.onAnswer?.(event);
      // Its exit was handled first (a runner killed right after it said ready): it is gone.
      if (ready || child.exitCode !== null || child.signalCode !== null) return;
      ready = true;
      starting--;
      failedStarts = 0;
      const req = waiting.shift();
      if (req) assign(runner, req);
      else idle.push(runner);
      refill();
    });
  } catch (err) {
    rmSync(slotLog, { force: true });
    const req = waiting.shift();
    if (req) send({ type: 'spawn-failed', runId: req.runId, message: (err as Error).message });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Keeps `poolSize` runners idle or starting beyond those that requests wait for. */
function refill(): void {
  if (failedStarts >= MAX_FAILED_STARTS && waiting.length === 0) return;
  while (process.connected && idle.length + starting + assigning < poolSize + waiting.length) startPooled();
}

function onRequest(req: SpawnRequest): void {
  if (!poolDir) return startDirect(req);
  const runner = idle.shift();
  if (runner) assign(runner, req);
  else waiting.push(req);
  refill();
}

process.on('message', (message: SpawnRequest) => {
  if (message.type === 'spawn') onRequest(message);
});
process.on('disconnect', () => process.exit(0));
if (poolDir) refill();
