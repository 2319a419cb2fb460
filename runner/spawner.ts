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
 * refilled then, in the background. A runner serves one run and exits, or, after a command run,
 * goes back to the service's pool (`kept`, then `back`: it is replaced only when it is not back
 * within KEPT_RETURN_MS); this process reaps it and reports its exit.
 *
 * Its environment is already the Tasks' base environment. When the service goes away (the IPC
 * channel closes) it exits; idle runners exit with the service (their channel closes), and running
 * ones are left alone: a restarted service adopts them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { openAppendFileSync, UnsafeFileError } from '../workers/safe-file.js';
import { HANDLE_LOST_WARNING, HandoverBackoff } from './handover-backoff.js';
import { onMessageLines } from './message-check.js';
import { RUNNER } from './runner-file.js';
import { NO_RUN_YET, RUN_FLAG, RUNNER_CHANNEL_FD, RUNNER_EVENTS, SLOT_LOG_FLAGS, SPAWNER_ORDERS, type SpawnerEvent, type SpawnerOrder, type StartSpec } from './spawner-messages.js';

/** How often the spawner checks that the service is still connected (see `main` below). */
const DISCONNECT_CHECK_MS = 500;
/** How long a runner kept for its command run may take to come back before the pool replaces it. */
const KEPT_RETURN_MS = 1_000;
/** After this many runners died before they were ready, in a row, waiting runs fail instead of retrying. */
const MAX_FAILED_STARTS = 3;

/** How the service started this spawner (its arguments). */
interface PoolConfig {
  /** Where pooled runners' slot logs are (`argv[2]`); empty: no pool. */
  readonly poolDir: string;
  /** Runners kept idle or starting (`argv[3]`, default 2). */
  readonly poolSize: number;
  /** How long the pool stays grown after the last run that had to wait for a runner (`argv[4]`, default 10 s). */
  readonly growthHoldMs: number;
}

function send(event: SpawnerEvent, channel?: Socket): void {
  if (process.connected) process.send!(event, channel, () => undefined);
}

/** Reports the exit of a runner (its exit code and signal: only its parent can know them). */
function reportExit(child: ChildProcess): void {
  child.once('exit', (code, signal) => send({ type: 'exited', pid: child.pid!, code, signal }));
}

/**
 * Stops this process reading a channel it passes to the service. Both hold the same socket until
 * the service acknowledges the handle: Node's handle passing (lib/internal/child_process.js,
 * `handleConversion['net.Socket'].send`) only sets the handle's `onread` to a no-op and closes it
 * at the ACK, so a handle still reading would take and drop the runner's answer to a run the
 * service wrote meanwhile. `socket.pause()` does not stop a socket's reads (only its 'data'
 * events; Node reads on up to the high-water mark), and a child's stdio pipe starts reading as it
 * is made (there is no `pauseOnCreate` for it), so the handle's own `readStop` is called: Node has
 * no public way to do it. This is the one place that touches a Node internal.
 */
function stopReading(channel: Socket): void {
  (channel as unknown as { _handle?: { readStop?: () => number } })._handle?.readStop?.();
}

/** A runner started for one run, writing straight to its log (no pool, or the run's log is on a foreign file system). */
function startDirect(req: StartSpec): void {
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

/**
 * The pool of runners started ahead of need, and the orders of the service. All the spawner's
 * state is here; `main` makes one.
 */
class Spawner {
  readonly #config: PoolConfig;
  readonly #backoff = new HandoverBackoff(() => this.refill(), (line) => process.stderr.write(`${line}\n`));
  /** Pooled runners starting, and those handed to the service that have not answered a run yet. */
  #starting = 0;
  readonly #offered = new Set<number>();
  /** Pooled runners alive (idle, offered, or serving runs). */
  readonly #live = new Set<number>();
  /** Runners serving a command run, which come back to the pool after it: when each was kept. */
  readonly #kept = new Map<number, number>();
  /** Runs the service says wait for a pooled runner. */
  #waiting = 0;
  /**
   * Runners kept beyond `poolSize` while runs had to wait for one lately: the pool doubles at the
   * first wait (one runner more at a time let a loop wait again while it grew). A client that
   * submits as soon as its last Task ended (a script, a benchmark) takes a runner every ~20 ms
   * here, while a runner needs 30-50 ms to start on a busy machine: with 2 in the pool, 4 runs in
   * 10 waited for one; with 4, 1 in 100 or fewer. The first submit to a service always waits (the
   * pool starts with it), so a loop's first runs find the pool grown already.
   */
  #growth = 0;
  #lastWait = 0;
  #slotCounter = 0;
  #failedStarts = 0;

  constructor(config: PoolConfig) {
    this.#config = config;
  }

  /** An order of the service, checked (a malformed one is logged and ignored; a `spawn` naming its run is answered). */
  order(value: unknown): void {
    const checked = SPAWNER_ORDERS.check(value);
    if (!checked.ok) {
      const runId = (value as { type?: unknown; runId?: unknown } | null)?.runId;
      if ((value as { type?: unknown } | null)?.type === 'spawn' && typeof runId === 'string' && runId) send({ type: 'spawn-failed', runId, message: checked.error });
      else process.stderr.write(`taskyard spawner: ${checked.error}; ignored\n`);
      return;
    }
    const message: SpawnerOrder = checked.message;
    if (message.type === 'spawn') return startDirect(message);
    if (message.type === 'back') {
      // Idle again at the service: counted as offered, unless it exited meanwhile.
      if (this.#kept.delete(message.pid) && this.#live.has(message.pid)) this.#offered.add(message.pid);
      return;
    }
    if (message.type === 'taken' || message.type === 'kept') {
      this.#offered.delete(message.pid);
      this.#backoff.recovered();
      if (message.type === 'kept') {
        // It comes back after its run: counted as available for a while, replaced only if its run
        // outlasts that, so a short command run costs no Node start at all.
        this.#kept.set(message.pid, Date.now());
        setTimeout(() => this.refill(), KEPT_RETURN_MS + 10).unref();
      }
    } else if (message.waiting > 0) {
      if (this.#growth === 0) send({ type: 'idle-limit', max: 2 * this.#config.poolSize });
      this.#growth = this.#config.poolSize;
      this.#lastWait = Date.now();
    }
    this.#waiting = message.waiting;
    this.refill();
  }

  /** A passed channel did not reach the service (see handover-backoff.ts). */
  handoverLost(): void {
    this.#backoff.lost();
  }

  /** The pool shrinks back once no run waited for `growthHoldMs` (runners beyond it are used, not replaced). */
  shrinkIfCalm(): void {
    if (this.#growth > 0 && Date.now() - this.#lastWait > this.#config.growthHoldMs) {
      // Idle runners beyond the pool go: each holds ~40 MB for a burst that is over.
      this.#growth = 0;
      send({ type: 'idle-limit', max: this.#config.poolSize });
    }
  }

  /** Keeps `poolSize` (and `growth`) runners idle or starting beyond those the waiting runs need. */
  refill(): void {
    if (!this.#config.poolDir || (this.#failedStarts >= MAX_FAILED_STARTS && this.#waiting === 0) || this.#backoff.holding) return;
    // Stops at a runner that could not be started: the next notice or exit tries again.
    while (process.connected && this.#offered.size + this.#starting + this.#returning() < this.#config.poolSize + this.#growth + this.#waiting && this.#startPooled());
  }

  /** Kept runners expected back soon (kept less than KEPT_RETURN_MS ago): not replaced yet. */
  #returning(): number {
    const since = Date.now() - KEPT_RETURN_MS;
    let count = 0;
    for (const keptAt of this.#kept.values()) if (keptAt > since) count++;
    return count;
  }

  /** A runner that died before it was ready; after a few in a row, the waiting runs fail. */
  #failedStart(slotLog: string): void {
    this.#starting--;
    rmSync(slotLog, { force: true });
    // A runner that cannot even start would be restarted forever: fail what waits instead.
    if (++this.#failedStarts >= MAX_FAILED_STARTS && this.#waiting > 0) {
      this.#waiting = 0;
      send({ type: 'pool-failing', message: 'task runners exit before they are ready (see the service log)' });
    }
    this.refill();
  }

  /**
   * Starts one pooled runner. Its first line on the channel says it is ready; then the channel goes
   * to the service (this process stops reading it), and the runner waits for its run there. False
   * when it could not be started (the waiting runs are told).
   */
  #startPooled(): boolean {
    const slotLog = join(this.#config.poolDir, `${process.pid}-${++this.#slotCounter}.log`);
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
      this.#starting++;
      let ready = false;
      child.once('error', () => undefined); // reported through 'exit'
      child.once('exit', (code, signal) => {
        if (!ready) return this.#failedStart(slotLog);
        // Idle, or handed a run: the service hears of the exit either way (it maps the pid).
        this.#live.delete(child.pid!);
        this.#kept.delete(child.pid!);
        if (this.#offered.delete(child.pid!)) this.refill();
        send({ type: 'exited', pid: child.pid!, code, signal });
      });
      const channel = child.stdio[RUNNER_CHANNEL_FD] as Socket;
      channel.on('error', () => undefined); // the runner's exit says what matters
      const onRefused = (error: string) => process.stderr.write(`taskyard spawner: runner ${child.pid}: ${error}; ignored\n`);
      onMessageLines(channel, RUNNER_EVENTS, (event) => {
        // Its exit was handled first (a runner killed right after it said ready): it is gone.
        if (event.type !== 'ready' || ready || child.exitCode !== null || child.signalCode !== null) return;
        ready = true;
        this.#starting--;
        this.#failedStarts = 0;
        this.#offered.add(child.pid!);
        this.#live.add(child.pid!);
        stopReading(channel);
        send({ type: 'ready', pid: child.pid! }, channel);
      }, onRefused);
      return true;
    } catch (err) {
      rmSync(slotLog, { force: true });
      if (this.#waiting > 0) send({ type: 'pool-failing', message: (err as Error).message });
      this.#waiting = 0;
      return false;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
}

function main(): void {
  const poolSize = Math.max(0, Number(process.argv[3] ?? 2) || 0);
  const spawner = new Spawner({ poolDir: process.argv[2] ?? '', poolSize, growthHoldMs: Math.max(0, Number(process.argv[4] ?? 10_000) || 10_000) });
  process.on('message', (message: unknown) => spawner.order(message));
  process.on('disconnect', () => process.exit(0));
  // Started with --no-warnings: a lost runner channel is said once (see handover-backoff.ts), not
  // once per runner; any other warning is printed as Node would.
  process.on('warning', (warning) => {
    if (warning.name === HANDLE_LOST_WARNING) spawner.handoverLost();
    else process.stderr.write(`${warning.name}: ${warning.message}\n`);
  });
  // A channel closed while a passed runner channel waits for the service's acknowledgement (the
  // service died at that moment) emits no 'disconnect' in Node 20: it waits for that ACK forever.
  // Its runners' channels it still holds would keep them idle for good, so a slow check backs it up.
  // The same check lets the pool shrink back (runners beyond it are used, not replaced).
  setInterval(() => {
    if (!process.connected) process.exit(0);
    spawner.shrinkIfCalm();
  }, DISCONNECT_CHECK_MS);
  spawner.refill();
}

main();
