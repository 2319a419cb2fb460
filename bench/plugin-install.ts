/**
 * What installing and removing a plugin package without dependencies costs: npm's own
 * `npm install ./tarball` / `npm uninstall` (the floor every plugin change paid before) against the
 * same change done in process (supervisor/plugins/direct-install.ts), on a fresh prefix each round.
 * CPU includes the npm child processes (reaped by this one).
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import { processCpu } from '../harness/process-cpu.js';
import { installDirectly, uninstallDirectly } from '../supervisor/plugins/direct-install.js';
import { runNpm } from '../supervisor/plugins/run-npm.js';
import { isMain, printTable } from './lib/table.js';

const ROUNDS = 3;
const never = new AbortController().signal;

async function measure(fn: () => Promise<unknown>): Promise<{ ms: number; cpu: number }> {
  const cpuOf = async () => {
    const { self, reaped } = await processCpu('self');
    return self + reaped;
  };
  const cpu0 = await cpuOf();
  const start = performance.now();
  await fn();
  return { ms: performance.now() - start, cpu: (await cpuOf()) - cpu0 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function run(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'taskyard-bench-plugin-install-'));
  try {
    const src = join(root, 'src', 'package');
    await mkdir(src, { recursive: true });
    await writeFile(join(src, 'package.json'), JSON.stringify({ name: 'bench-plugin', version: '1.0.0', type: 'module', taskyard: { tasks: './tasks.js' } }));
    await writeFile(join(src, 'tasks.js'), 'export default [];\n');
    const tarball = join(root, 'bench-plugin.tgz');
    await createTar({ gzip: true, cwd: join(root, 'src'), file: tarball }, ['package']);

    const results = { npm: { install: [] as Array<{ ms: number; cpu: number }>, uninstall: [] as Array<{ ms: number; cpu: number }> }, direct: { install: [] as Array<{ ms: number; cpu: number }>, uninstall: [] as Array<{ ms: number; cpu: number }> } };
    for (let round = 0; round < ROUNDS; round++) {
      for (const way of ['npm', 'direct'] as const) {
        const prefix = join(root, `${way}-${round}`);
        await mkdir(join(prefix, 'tarballs'), { recursive: true });
        await writeFile(join(prefix, 'package.json'), JSON.stringify({ private: true, dependencies: {} }));
        const rel = 'tarballs/bench.tgz';
        await copyFile(tarball, join(prefix, rel));
        results[way].install.push(await measure(() => (way === 'npm' ? runNpm(['install', `./${rel}`], prefix, never) : installDirectly(prefix, rel))));
        results[way].uninstall.push(await measure(() => (way === 'npm' ? runNpm(['uninstall', 'bench-plugin'], prefix, never) : uninstallDirectly(prefix, 'bench-plugin'))));
      }
    }
    const rows = (['install', 'uninstall'] as const).flatMap((op) => {
      const floor = median(results.npm[op].map((r) => r.ms));
      return (['npm', 'direct'] as const).map((way) => {
        const ms = median(results[way][op].map((r) => r.ms));
        return [`${op}: ${way === 'npm' ? 'npm (floor)' : 'in process'}`, ms, median(results[way][op].map((r) => r.cpu)), ms / floor];
      });
    });
    printTable(`plugin-install: a package without dependencies into a fresh prefix, median of ${ROUNDS}`, ['change', 'ms', 'cpu s', 'ratio'], rows);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) await run();
