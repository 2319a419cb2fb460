import { spawn, type ChildProcess } from 'node:child_process';

export interface ChildServer {
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a server script (with `nodeArgs` for node itself) in its own process and waits for its `LISTENING <port>` line. */
export function startChildServer(script: string, args: string[] = [], env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<ChildServer> {
  return startServerCommand(process.execPath, [...nodeArgs, script, ...args], env);
}

/** Starts any server program and waits for its `LISTENING <port>` line. */
export function startServerCommand(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ChildServer> {
  const script = args.join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /LISTENING (\d+)/.exec(out) ?? /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        resolve({
          port: Number(m[1]),
          child,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before listening: ${out}`)));
  });
}
