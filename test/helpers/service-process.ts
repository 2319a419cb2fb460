import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import type { CalledName, ReplyOf } from './jobs-client.js';
import { waitFor } from './wait-for.js';

const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
/** The bearer token of services started this way. */
export const SERVICE_PROCESS_TOKEN = 'service-process-token';
const TOKEN = SERVICE_PROCESS_TOKEN;

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** `POST /jobs/{name}` with `{arguments}`; answers the parsed body, its answer typed by the Job. */
  call<N extends CalledName>(name: N, args?: Record<string, unknown>): Promise<ReplyOf<N>>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
}

export interface ServiceProcessOptions {
  /** A configuration file (`--config`). */
  config?: string;
  /** Its limit on open file descriptors (`ulimit -n`, set by a shell that then execs the service). */
  openFiles?: number;
}

/** Starts `taskyard serve` as a real child process and reads the URL it prints. */
export async function startServiceProcess(t: Test, workspace: string, opts: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  const argv = [process.execPath, CLI, 'serve', '--port', '0', '--workspace', workspace, '--token', TOKEN, ...(opts.config ? ['--config', opts.config] : [])];
  const child = opts.openFiles === undefined
    ? spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('/bin/bash', ['-c', `ulimit -n ${opts.openFiles} && exec "$@"`, 'bash', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`service exited: ${output}`);
    return /listening on (http:\/\/\S+)/.exec(output)?.[1];
  }, 60_000, 'the service URL'); // a bound, not a wait: a loaded 2-core machine has taken over 20 s
  const call = async <N extends CalledName>(name: N, args: Record<string, unknown> = {}) => {
    const res = await fetch(`${url}/jobs/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
    return (await res.json()) as ReplyOf<N>;
  };
  return { url, child, call, output: () => output };
}

/** Resolves once the child has exited (at once when it already has). */
export const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
