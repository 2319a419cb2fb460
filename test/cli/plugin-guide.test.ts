import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { startTestService } from '../helpers/service.js';

/**
 * docs/plugins.md promises that its `sh` blocks work as written: they are run here, in order, as
 * one bash script from a clean directory, with `taskyard` on PATH and a real service to install into.
 */
const guide = await readFile(join(PACKAGE_ROOT, 'docs', 'plugins.md'), 'utf8');
const blocks = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

t.test('every command of the plugin guide works from a clean directory', async (t) => {
  t.ok(blocks.length >= 5, 'the guide has its command blocks');
  const svc = await startTestService(t);
  const root = await mkdtemp(join(tmpdir(), 'taskyard-guide-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const bin = join(root, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'taskyard'), `#!/bin/sh\nexec "${process.execPath}" "${join(PACKAGE_ROOT, 'bin', 'taskyard')}" "$@"\n`);
  await chmod(join(bin, 'taskyard'), 0o755);
  const work = join(root, 'work');
  await mkdir(work);
  const script = `set -eu\n${blocks.join('\n')}`;
  const env = {
    ...process.env,
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
  const output = await new Promise<{ code: number | null; text: string }>((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: work, env });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('close', (code) => resolve({ code, text }));
  });
  t.equal(output.code, 0, output.text.slice(-4000));
  t.match(output.text, /word-tools#count-words#\S+ {2}succeeded/, 'task run ran the example Task');
  t.match(output.text, /# pass 1/, "the scaffold's own test passed");
  t.match(output.text, /"name": "word-tools"/, 'plugin install installed it');
  t.match(output.text, /INFO 5 words, most frequent: a, rose, is/, 'submit --follow printed its log');
  t.same((await svc.call('list_plugins')).body.answer, [], 'the guide ends by uninstalling it');
});
