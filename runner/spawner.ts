/**
 * The spawner: a small process that starts task runners for the service. `fork()` copies the
 * parent's page tables, so spawning from the service (well over 100 MB resident) blocks its event
 * loop ~15 ms per Task; from this process (~40 MB) it takes ~1.5 ms, off the service's thread.
 *
 * It keeps a few runners started ahead of need (`argv[3]`, default 2, and up to twice that while
 * runs had to wait for one lately, `argv[4]` ms after the last wait; then the service lets the
 * idle runners beyond the pool go): a Node start costs ~25 ms of CPU and ~50 ms of wall time
 * here, so a submit hands its run to a runner that is already up. Each pooled runner is detached
 * (its own process group) and writes to a slot log in the pool directory (`argv[2]`), which it renames onto the run's `task.log` when it takes a run:
 * the descriptor stays, so stdout, stderr and the Task's subprocesses all write to the Task's log.
 * Once a runner says it is ready, its channel (the other end of its fd 3) is passed to the
 * service, which hands it a run directly: a hop through this process cost every start ~0.4 ms,
 * and several when this process was busy starting the next runner. The service says when a
 * runner has answered its run (`taken`) and how many runs wait for one (`want`); the pool is
 * refilled then, in the background. Each runner serves one run and exits; this process reaps it
 * and reports its exit.
 *
 * Its environment is already the Tasks' base environment. When the service goes away (the IPC
 * channel closes) it exits; idle runners exit with the service (their channel closes), and running
 * ones are left alone: a restarted service adopts them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { openAppendFileSync, UnsafeFileError } from '../workers/safe-file.js';
import { HANDLE_LOST_WARNING, HandoverBackoff } from './handover-backoff.js';
import { RUNNER } from './runner-file.js';
import { NO_RUN_YET, onJsonLines, RUN_FLAG, RUNNER_CHANNEL_FD, type PoolNotice, type RunnerEvent, type SpawnerEvent, type SpawnRequest } from './spawner-messages.js';

const poolDir = process.argv[2] ?? '';
const poolSize = Math.max(0, Number(process.argv[3] ?? 2) || 0);
/** How long the pool stays grown after the last run that had to wait for a runner (`argv[4]`, default 10 s). */
const growthHoldMs = Math.max(0, Number(process.argv[4] ?? 10_000) || 10_000);
/** How often the spawner checks that the service is still connected (see the end of this file). */
const DISCONNECT_CHECK_MS = 500;
/** A fresh slot log, written only at its end (O_APPEND), never through a link. */
const SLOT_LOG_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND | constants.O_NOFOLLOW;
/** After this many runners died before they were ready, in a row, waiting runs fail instead of retrying. */
const MAX_FAILED_STARTS = 3;

/** Pooled runners starting, and those handed to the service that have not answered a run yet. */
let starting = 0;
const offered = new Set<number>();
/** Runs the service says wait for a pooled runner. */
let waiting = 0;
/**
 * Runners kept beyond `poolSize` while runs had to wait for one lately: the pool doubles at the
 * first wait (one runner more at a time let a loop wait again while it grew). A client that
 * submits as soon as its last Task ended (a script, a benchmark) takes a runner every ~20 ms
 * here, while a runner needs 30-50 ms to start on a busy machine: with 2 in the pool, 4 runs in
 * 10 waited for one; with 4, 1 in 100 or fewer. The first submit to a service always waits (the
 * pool starts with it), so a loop's first runs find the pool grown already.
 */
let growth = 0;
let lastWait = 0;
let slotCounter = 0;
let failedStarts = 0;
const backoff = new HandoverBackoff(refill, (line) => process.stderr.write(`${line}\n`));

function send(event: SpawnerEvent, channel?: Socket): void {
  if (process.connected) process.send!(event, channel, () => undefined);
}

/** Reports the exit of a runner (its exit code and signal: only its parent can know them). */
function reportExit(child: ChildProcess): void {
  child.once('exit', (code, signal) => send({ type: 'exited', pid: child.pid!, code, signal }));
}

/** A runner started for one run, writing straight to its log (no pool, or the run's log is on a foreign file system). */
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
    if (child.pid === undefined) return;
    send({ type: 'spawned', runId: req.runId, pid: child.pid, startedAt: null });
    reportExit(child);
  } catch (err) {
    const message = err instanceof UnsafeFileError ? `task.log is not a regular file (${err.kind}); it is not written` : (err as Error).message;
    send({ type: 'spawn-failed', runId: req.runId, message });
  } finally {
    if (logFd !== undefined) closeSync(logFd);
  }
}

/** A runner that died before it was ready; after a few in a row, the waiting runs fail. */
function failedStart(slotLog: string): void {
  starting--;
  rmSync(slotLog, { force: true });
  // A runner that cannot even start would be restarted forever: fail what waits instead.
  if (++failedStarts >= MAX_FAILED_STARTS && waiting > 0) {
    waiting = 0;
    send({ type: 'pool-failing', message: 'task runners exit before they are ready (see the service log)' });
  }
  refill();
}

/**
 * Starts one pooled runner. Its first line on the channel says it is ready; then the channel goes
 * to the service (this process stops reading it), and the runner waits for its run there. False
 * when it could not be started (the waiting runs are told).
 */
function startPooled(): boolean {
  const slotLog = join(poolDir, `${process.pid}-${++slotCounter}.log`);
  let fd: number | undefined;
  try {
    // Appending: stdout and stderr share this one open file with the Task's logger (its own
    // descriptor, also appending) and the Task's subprocesses; a descriptor writing at its own
    // offset overwrote what the others had written before it.
    fd = openSync(slotLog, SLOT_LOG_FLAGS, 0o644);
    const child = spawn(process.execPath, [RUNNER, RUN_FLAG, NO_RUN_YET, '--slot-log', slotLog], {
      // Not the pool directory: a runner whose working directory vanished while it started (a
      // workspace removed) hung for good in Node's start-up when NODE_OPTIONS preloads modules.
      cwd: '/',
      detached: true,
      stdio: ['ignore', fd, fd, 'pipe'],
      env: process.env,
    });
    starting++;
    let ready = false;
    child.once('error', () => undefined); // reported through 'exit'
    child.once('exit', (code, signal) => {
      if (!ready) return failedStart(slotLog);
      // Idle, or handed a run: the service hears of the exit either way (it maps the pid).
      if (offered.delete(child.pid!)) refill();
      send({ type: 'exited', pid: child.pid!, code, signal });
    });
    const channel = child.stdio[RUNNER_CHANNEL_FD] as Socket;
    channel.on('error', () => undefined); // the runner's exit says what matters
    onJsonLines<RunnerEvent>(channel, (event) => {
      // Its exit was handled first (a runner killed right after it said ready): it is gone.
      if (event.type !== 'ready' || ready || child.exitCode !== null || child.signalCode !== null) return;
      ready = true;
      starting--;
      failedStarts = 0;
      offered.add(child.pid!);
      stopReading(channel);
      send({ type: 'ready', pid: child.pid! }, channel);
    });
    return true;
  } catch (err) {
    rmSync(slotLog, { force: true });
    if (waiting > 0) send({ type: 'pool-failing', message: (err as Error).message });
    waiting = 0;
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Stops this process reading a channel it passes to the service. Both hold the same socket until
 * the service acknowledges the handle, and a handle still reading would take (and, once passed,
 * drop) the runner's answer to its run. `pause()` does not stop a socket's reads, so the handle's
 * own `readStop` is called (Node has no public way to do it).
 */
function stopReading(channel: Socket): void {
  (channel as unknown as { _handle?: { readStop?: () => number } })._handle?.readStop?.();
}

/** Keeps `poolSize` (and `growth`) runners idle or starting beyond those the waiting runs need. */
function refill(): void {
  if ((failedStarts >= MAX_FAILED_STARTS && waiting === 0) || backoff.holding) return;
  // Stops at a runner that could not be started: the next notice or exit tries again.
  while (process.connected && offered.size + starting < poolSize + growth + waiting && startPooled());
}

process.on('message', (message: SpawnRequest | PoolNotice) => {
  if (message.type === 'spawn') return startDirect(message);
  if (message.type === 'taken') {
    offered.delete(message.pid);
    backoff.recovered();
  } else if (message.waiting > 0) {
    if (growth === 0) send({ type: 'idle-limit', max: 2 * poolSize });
    growth = poolSize;
    lastWait = Date.now();
  }
  waiting = message.waiting;
  refill();
});
process.on('disconnect', () => process.exit(0));
// Started with --no-warnings: a lost runner channel is said once (see handover-backoff.ts), not
// once per runner; any other warning is printed as Node would.
process.on('warning', (warning) => {
  if (warning.name === HANDLE_LOST_WARNING) backoff.lost();
  else process.stderr.write(`${warning.name}: ${warning.message}\n`);
});
// A channel closed while a passed runner channel waits for the service's acknowledgement (the
// service died at that moment) emits no 'disconnect' in Node 20: it waits for that ACK forever.
// Its runners' channels it still holds would keep them idle for good, so a slow check backs it up.
// The same check lets the pool shrink back (runners beyond it are used, not replaced).
setInterval(() => {
  if (!process.connected) process.exit(0);
  if (growth > 0 && Date.now() - lastWait > growthHoldMs) {
    // Idle runners beyond the pool go: each holds ~40 MB for a burst that is over.
    growth = 0;
    send({ type: 'idle-limit', max: poolSize });
  }
}, DISCONNECT_CHECK_MS);
if (poolDir) refill();
