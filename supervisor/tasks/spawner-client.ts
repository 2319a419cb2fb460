import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { SpawnerEvent, SpawnRequest } from '../../workers/task-runner/spawner-messages.js';
import type { WorkerEnd } from './finalize.js';
import { findRunners } from './runner-processes.js';

const SPAWNER = fileURLToPath(new URL('../../workers/task-runner/spawner.js', import.meta.url));

/** What the launcher hears about one spawn request. */
export interface SpawnHandlers {
  spawned(pid: number): void;
  /** The worker ended (or never started). */
  ended(end: WorkerEnd): void;
  /** The spawner died while the worker lives on: nobody will report its exit any more. */
  orphaned(pid: number): void;
}

/**
 * The service's side of the spawner process: started on first use (and again after it dies),
 * one IPC message per request, events routed back by run_id.
 */
export class SpawnerClient {
  readonly #env: NodeJS.ProcessEnv;
  readonly #runs = new Map<string, { req: Omit<SpawnRequest, 'type'>; handlers: SpawnHandlers; pid: number | null; spawner: ChildProcess }>();
  #child: ChildProcess | undefined;

  /** `env` is the Tasks' base environment (the spawner's own). */
  constructor(env: NodeJS.ProcessEnv) {
    this.#env = env;
  }

  spawn(req: Omit<SpawnRequest, 'type'>, handlers: SpawnHandlers, retry = true): void {
    const child = this.#ensure();
    this.#runs.set(req.runId, { req, handlers, pid: null, spawner: child });
    child.send({ type: 'spawn', ...req } satisfies SpawnRequest, (err) => {
      if (!err) return;
      // The spawner died before it read the request (its exit may not be processed yet): the
      // request certainly started nothing, so a fresh spawner may take it once.
      this.#runs.delete(req.runId);
      if (this.#child === child) this.#child = undefined;
      if (retry) this.spawn(req, handlers, false);
      else handlers.ended({ kind: 'spawn-failed', message: `the spawner is unavailable: ${err.message}` });
    });
  }

  /** Closes the channel: the spawner exits, the runners keep running. */
  close(): void {
    this.#child?.disconnect();
    this.#child = undefined;
  }

  #ensure(): ChildProcess {
    if (this.#child?.connected) return this.#child;
    const child = fork(SPAWNER, [], { env: this.#env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    child.on('message', (event: SpawnerEvent) => this.#onEvent(event));
    child.once('exit', () => void this.#onSpawnerExit(child));
    // The service's own handles keep it alive; the spawner must not keep a stopping one up.
    child.unref();
    child.channel?.unref();
    this.#child = child;
    return child;
  }

  #onEvent(event: SpawnerEvent): void {
    const run = this.#runs.get(event.runId);
    if (!run) return;
    if (event.type === 'spawned') {
      run.pid = event.pid;
      run.handlers.spawned(event.pid);
    } else if (event.type === 'spawn-failed') this.#settle(event.runId, { kind: 'spawn-failed', message: event.message });
    else this.#settle(event.runId, { kind: 'exited', code: event.code, signal: event.signal });
  }

  #settle(runId: string, end: WorkerEnd): void {
    const run = this.#runs.get(runId);
    this.#runs.delete(runId);
    run?.handlers.ended(end);
  }

  /**
   * Runs started by a dead spawner are watched through /proc from now on. A request it may not
   * have carried out is looked up by its run_id among the processes, and sent again if absent.
   */
  async #onSpawnerExit(child: ChildProcess): Promise<void> {
    if (this.#child === child) this.#child = undefined;
    const orphans = [...this.#runs].filter(([, run]) => run.spawner === child);
    for (const [runId] of orphans) this.#runs.delete(runId);
    // One look at /proc serves every request whose pid never came back.
    let runners: Awaited<ReturnType<typeof findRunners>> | undefined;
    for (const [runId, run] of orphans) {
      const pid = run.pid ?? (runners ??= await findRunners()).get(runId)?.pid ?? null;
      if (pid === null) {
        this.spawn(run.req, run.handlers, false);
        continue;
      }
      if (run.pid === null) run.handlers.spawned(pid);
      run.handlers.orphaned(pid);
    }
  }
}
