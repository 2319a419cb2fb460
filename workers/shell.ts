import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { constants } from 'node:os';
import type { ShellOutput } from '../schemas/machine.js';
import { childEnv } from './child-env.js';
import { utf8SafeLength } from '../core/utf8-cut.js';
import { CappedCollector, SHELL_OUTPUT_CAP } from './capped-output.js';
import { killProcessTree } from './kill-tree.js';
import { OutputStreamer, type OutputChunk } from './output-stream.js';
import { within } from './within.js';

/** What the pool receives for one `shell` call. */
export interface ShellRequest {
  command: string;
  /** Seconds, as the caller gave them (echoed in the timeout message). */
  timeout: number;
  cwd: string;
  /** Whether the caller watches the output as it is written (chunks go to `onOutput`). */
  stream?: boolean;
  /** The user to run the command as (`service.run_as`); absent: the service's own. */
  user?: { uid: number; gid: number };
}

/**
 * After the shell exits, how long to keep reading its pipes: enough to drain what it wrote, but
 * a background process that inherited the pipe must not hold the answer hostage.
 */
const DRAIN_LINGER_MS = 250;

/**
 * Every process a command starts inherits this variable, set to an ID of that call: a process
 * that left the group and lost its parent (a daemon, `(setsid cmd &)`) is found by it at a kill.
 */
export const SHELL_MARK_VARIABLE = 'TASKYARD_SHELL_ID';

type Ending =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  | { kind: 'timed_out' }
  | { kind: 'aborted' }
  | { kind: 'failed'; error: Error };

/** Races exit, timeout and abort in one place; the first to happen decides. */
function awaitEnding(child: ChildProcess, timeoutMs: number, signal: AbortSignal): Promise<Ending> {
  return new Promise((resolve) => {
    const onExit = (code: number | null, sig: NodeJS.Signals | null) => finish({ kind: 'exited', code, signal: sig });
    const onError = (error: Error) => finish({ kind: 'failed', error });
    const onAbort = () => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'timed_out' }), timeoutMs);
    function finish(ending: Ending): void {
      clearTimeout(timer);
      child.off('exit', onExit).off('error', onError);
      signal.removeEventListener('abort', onAbort);
      resolve(ending);
    }
    child.once('exit', onExit).once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
  });
}

/** Appends a notice to stderr, cutting earlier output (on a character boundary) to stay within the cap. */
function withNotice(text: string, notice: string): string {
  const line = text === '' || text.endsWith('\n') ? notice : `\n${notice}`;
  const room = SHELL_OUTPUT_CAP - Buffer.byteLength(line);
  const bytes = Buffer.from(text);
  if (bytes.length <= room) return text + line;
  const head = bytes.subarray(0, room);
  return head.toString('utf8', 0, utf8SafeLength(head)) + line;
}

function exitCodeOf(ending: Extract<Ending, { kind: 'exited' }>): number | null {
  if (ending.code !== null) return ending.code;
  return ending.signal ? 128 + (constants.signals[ending.signal] ?? 0) : null;
}

/**
 * Runs `/bin/sh -c command` in its own process group inside `cwd`, keeping at most 1 MiB of each
 * stream. On timeout or abort the whole tree is killed and the answer comes without waiting for
 * the pipes (a surviving grandchild may hold them open forever). With `request.stream`, every
 * piece of output also goes to `onOutput` as it is written.
 */
export async function runShell(request: ShellRequest, signal: AbortSignal, onOutput?: (chunk: OutputChunk) => void): Promise<ShellOutput> {
  const markId = randomUUID();
  const env = { ...childEnv(), [SHELL_MARK_VARIABLE]: markId };
  const child = spawn('/bin/sh', ['-c', request.command], { cwd: request.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...request.user });
  const stdout = new CappedCollector();
  const stderr = new CappedCollector();
  stdout.attach(child.stdout!);
  stderr.attach(child.stderr!);
  if (onOutput && request.stream) {
    new OutputStreamer('stdout', onOutput).attach(child.stdout!);
    new OutputStreamer('stderr', onOutput).attach(child.stderr!);
  }
  const closed = once(child, 'close').catch(() => undefined);

  const ending = await awaitEnding(child, request.timeout * 1000, signal);
  if (ending.kind === 'failed') throw new Error(`cannot start /bin/sh: ${ending.error.message}`);
  if (ending.kind === 'exited') {
    await within(closed, DRAIN_LINGER_MS);
  } else if (child.pid !== undefined) {
    await killProcessTree(child.pid, undefined, `${SHELL_MARK_VARIABLE}=${markId}`);
  }
  child.stdout!.destroy();
  child.stderr!.destroy();

  const out = stdout.result();
  const err = stderr.result();
  let stderrText = err.text;
  if (ending.kind === 'timed_out') stderrText = withNotice(stderrText, `Command timed out after ${request.timeout} seconds`);
  if (ending.kind === 'aborted') stderrText = withNotice(stderrText, 'Command aborted: the caller went away');
  return {
    stdout: out.text,
    stderr: stderrText,
    exit_code: ending.kind === 'exited' ? exitCodeOf(ending) : null,
    stdout_truncated: out.truncated,
    stderr_truncated: err.truncated,
  };
}
