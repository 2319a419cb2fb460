/**
 * What starting costs, in CPU: every `taskyard serve`, every CLI command and every test file (the
 * suite starts ~160 test processes, each importing the service and starting one or more) pays it.
 * Each case is a fresh Node process; its CPU (user + system, its own children included) is read
 * from this process's reaped-children counters once it has exited; the median of
 * BENCH_STARTUP_ROUNDS (5) interleaved rounds. The floor is a bare `node -e 0`, measured in the same
 * rounds. Cases: importing the service module; importing it, starting a service (temporary
 * workspace, port 0) and closing it; a second start in the same process (what each further test
 * service costs); `taskyard serve` until it listens, then SIGTERM; one `taskyard version` call
 * against a running service. Each once as users run Node and once with `--no-opt`, as the suite
 * runs test files (test/suite/run-file.ts).
 *
 * `BENCH_STARTUP_BASE=/path/to/another/built/checkout` adds the same rows for that checkout, for a
 * before/after comparison in one run.
 * Run: `node dist/bench/startup.js` (after `npm run build`).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { cpuOfStat } from '../harness/process-cpu.js';
import { BENCH_TOKEN, startServiceProcess } from './lib/service-process.js';
import { printTable } from './lib/table.js';

const ROUNDS = Number(process.env['BENCH_STARTUP_ROUNDS']) || 5;
const MODES: ReadonlyArray<{ label: string; flags: string[] }> = [
  { label: 'node', flags: [] },
  { label: 'node --no-opt', flags: ['--no-opt'] },
];

/** CPU seconds of every child this process has reaped so far. */
const reapedCpu = () => cpuOfStat(readFileSync('/proc/self/stat', 'utf8')).reaped;

/** Runs one Node process to its end; answers the CPU milliseconds it (and what it reaped) used. */
async function nodeCpu(args: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  const before = reapedCpu();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`node ${args.join(' ')} exited with ${code}`);
  return (reapedCpu() - before) * 1000;
}

/** A module script, run with `--input-type=module -e`, that imports the service of `root` and starts it `starts` times. */
function startScript(root: string, starts: number): string {
  const url = (path: string) => JSON.stringify(pathToFileURL(join(root, 'dist', path)).href);
  return `
    import { mkdtemp, rm } from 'node:fs/promises';
    import { tmpdir } from 'node:os';
    import { join } from 'node:path';
    const { validateConfig } = await import(${url('supervisor/common/config.js')});
    const { startService } = await import(${url('app/service.js')});
    for (let i = 0; i < ${starts}; i++) {
      const workspace = await mkdtemp(join(tmpdir(), 'taskyard-bench-start-'));
      const config = validateConfig({ service: { workspace, port: 0, host: '127.0.0.1' } }, 'bench');
      const service = await startService({ config, token: 'bench-token' });
      await service.close();
      await rm(workspace, { recursive: true, force: true });
    }`;
}

type Case = { name: string; measure: () => Promise<number> };

function casesOf(root: string, tag: string, flags: string[]): Case[] {
  const module = (code: string) => [...flags, '--input-type=module', '-e', code];
  const serviceUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'app', 'service.js')).href);
  return [
    { name: `${tag}import the service`, measure: () => nodeCpu(module(`await import(${serviceUrl});`)) },
    { name: `${tag}import + start + close`, measure: () => nodeCpu(module(startScript(root, 1))) },
    { name: `${tag}import + 2 x (start + close)`, measure: () => nodeCpu(module(startScript(root, 2))) },
    {
      name: `${tag}taskyard serve, listening, SIGTERM`,
      measure: async () => {
        const before = reapedCpu();
        const service = await startServiceProcess({ root, nodeArgs: flags });
        await service.stop();
        return (reapedCpu() - before) * 1000;
      },
    },
    {
      name: `${tag}taskyard version (CLI call)`,
      measure: async () => {
        // The service runs in its own process; only the CLI process is counted.
        const service = await startServiceProcess({ root });
        try {
          return await nodeCpu([...flags, join(root, 'dist', 'bin', 'cli.js'), 'version', '--url', service.url, '--token', BENCH_TOKEN]);
        } finally {
          await service.stop();
        }
      },
    },
  ];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs the bench and prints its table. */
export async function run(): Promise<void> {
  const base = process.env['BENCH_STARTUP_BASE'];
  const roots: Array<[string, string]> = [[PACKAGE_ROOT, base ? 'this: ' : '']];
  if (base) roots.push([base, 'base: ']);
  const rows: Array<Array<string | number>> = [];
  for (const mode of MODES) {
    const cases: Case[] = [{ name: 'bare node -e 0 (floor)', measure: () => nodeCpu([...mode.flags, '-e', '0']) }];
    for (const [root, tag] of roots) cases.push(...casesOf(root, tag, mode.flags));
    const samples = cases.map(() => [] as number[]);
    // Interleaved rounds, so a burst of load elsewhere on a shared machine does not land on one case only.
    for (let round = 0; round < ROUNDS; round++) for (const [i, c] of cases.entries()) samples[i]!.push(await c.measure());
    const floor = median(samples[0]!);
    for (const [i, c] of cases.entries()) rows.push([mode.label, c.name, median(samples[i]!), median(samples[i]!) - floor]);
  }
  printTable(`start-up CPU (median of ${ROUNDS} rounds; ms of CPU, the process and its reaped children)`, ['node', 'case', 'CPU ms', 'over floor'], rows);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
