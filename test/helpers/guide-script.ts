import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import type { TestService } from './service.js';

/**
 * A guide in docs/ promises that its blocks work as written. Its runnable parts, in order: each
 * ```sh block as it is, and each block whose info string names a file (```python train.py) as a
 * command that writes that file, as the reader saves it. Other blocks (```ts excerpts) are prose.
 */
export function guideScript(markdown: string): { blocks: number; script: string } {
  const parts: string[] = [];
  for (const [, lang, file, body] of markdown.matchAll(/```(\w+)(?: +(\S+))?\n([\s\S]*?)```/g)) {
    if (lang === 'sh' && file === undefined) parts.push(body!);
    else if (file !== undefined) parts.push(`cat > '${file}' <<'GUIDE_FILE_END'\n${body!}GUIDE_FILE_END\n`);
  }
  return { blocks: parts.length, script: `set -eu\n${parts.join('\n')}` };
}

/**
 * Runs a guide's script (guideScript) with bash from a clean directory (`work`, removed after the
 * test), with `taskyard` on PATH, the CLI pointed at `svc` and any `env` the guide has the reader
 * set; resolves with its exit code, its stdout and stderr together, and that directory.
 */
export async function runGuide(
  t: Test,
  svc: TestService,
  script: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; text: string; work: string }> {
  const root = await mkdtemp(join(tmpdir(), 'taskyard-guide-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const bin = join(root, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'taskyard'), `#!/bin/sh\nexec "${process.execPath}" "${join(PACKAGE_ROOT, 'bin', 'taskyard')}" "$@"\n`);
  await chmod(join(bin, 'taskyard'), 0o755);
  const work = join(root, 'work');
  await mkdir(work);
  const guideEnv = {
    ...process.env,
    ...env,
    PATH: `${bin}:${process.env['PATH'] ?? ''}`,
    HOME: root,
    // `taskyard task run` keeps its record in a new temporary directory: inside root, removed with it.
    TMPDIR: root,
    TASKYARD_URL: svc.url,
    TASKYARD_TOKEN: svc.token ?? '',
    // npm's cache is enough for TypeScript and @types/node where the registry is out of reach.
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: work, env: guideEnv });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', (code) => resolve({ code, text, work }));
  });
}
