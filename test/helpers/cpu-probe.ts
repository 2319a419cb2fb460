/**
 * Loaded with `--import` into each test process by the suite runner (test/suite/run-file.ts), which
 * names a file in `TASKYARD_CPU_FILE`: at exit it writes the CPU the process used there, so the
 * runner can say where the suite's CPU goes even while the machine is shared (wall time is not).
 *
 * Counted: this process (user + system) and every descendant that was reaped, through its parent,
 * by the time this process exits (/proc/self/stat cutime + cstime): the service's spawner and the
 * runners it reaped, shells, CLI and npm processes, chromium and its helpers. Daemons that leave the
 * tree count only where a helper reads them before stopping them (`countCpu`: Slurm's daemons and
 * the jobs their slurmd reaped). Not counted: anything else that left the tree (idle pooled runners
 * left to exit on their own when their spawner exits) and a process killed before it exits.
 */
import { writeFileSync } from 'node:fs';
import { statCpu, type FileCpu } from './cpu-times.js';

const target = process.env['TASKYARD_CPU_FILE'];
// The file is this process's alone: the processes a test starts must not overwrite it.
delete process.env['TASKYARD_CPU_FILE'];
let daemons = 0;

/** Adds the CPU of a process outside this one's tree (read just before it is stopped) to the file's. */
export function countCpu(pid: number): void {
  const { self, reaped } = statCpu(pid);
  daemons += self + reaped;
}

if (target) {
  // Children are reaped before their 'exit' events fire, so by now every one the file awaited counts.
  process.on('exit', () => {
    const own = process.resourceUsage();
    const cpu: FileCpu = { own: (own.userCPUTime + own.systemCPUTime) / 1e6, children: statCpu('self').reaped, daemons };
    writeFileSync(target, JSON.stringify(cpu));
  });
}
