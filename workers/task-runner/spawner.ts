/**
 * The spawner: a small process that starts task runners for the service. `fork()` copies the
 * parent's page tables, so spawning from the service (well over 100 MB resident) blocks its event
 * loop ~15 ms per Task; from this process (~40 MB) it takes ~1.5 ms, off the service's thread.
 * Its environment is already the Tasks' base environment. When the service goes away (the IPC
 * channel closes) it exits and leaves the runners alone: they are detached, and a restarted
 * service adopts them.
 */
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { openAppendFileSync, UnsafeFileError } from '../safe-file.js';
import { RUNNER, type SpawnerEvent, type SpawnRequest } from './spawner-messages.js';

function send(event: SpawnerEvent): void {
  if (process.connected) process.send!(event);
}

function start(req: SpawnRequest): void {
  let logFd: number | undefined;
  try {
    // The log is opened safely: a link planted as task.log while the run was queued must not
    // send the Task's output outside the workspace, nor a FIFO stop this process.
    logFd = openAppendFileSync(req.logFile);
    const child = spawn(process.execPath, [RUNNER], { cwd: req.cwd, detached: true, stdio: ['ignore', logFd, logFd], env: { ...process.env, ...req.env } });
    child.once('error', (err) => send({ type: 'spawn-failed', runId: req.runId, message: err.message }));
    child.once('exit', (code, signal) => send({ type: 'exited', runId: req.runId, code, signal }));
    if (child.pid !== undefined) send({ type: 'spawned', runId: req.runId, pid: child.pid });
  } catch (err) {
    const message = err instanceof UnsafeFileError ? `task.log is not a regular file (${err.kind}); it is not written` : (err as Error).message;
    send({ type: 'spawn-failed', runId: req.runId, message });
  } finally {
    if (logFd !== undefined) closeSync(logFd);
  }
}

process.on('message', (message: SpawnRequest) => {
  if (message.type === 'spawn') start(message);
});
process.on('disconnect', () => process.exit(0));
