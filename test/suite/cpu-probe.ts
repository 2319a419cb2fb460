/**
 * Loaded with `--import` into each test process by the suite runner (test/suite/run-file.ts), which
 * names a file in `TASKYARD_CPU_FILE`: at exit it writes the CPU the process used there, so the
 * runner can say where the suite's CPU goes even while the machine is shared (wall time is not).
 *
 * Counted: this process (user + system) and every descendant that was reaped, through its parent,
 * by the time this process exits (`/proc/self/stat` cutime/cstime): the service's spawner and its
 * runners, shells, CLI processes, chromium and its helpers, Slurm's commands. Not counted: what was
 * not reaped down that chain (a daemon that double-forked away, runners left idle when a spawner
 * exits — they end on their own, under init), and a process killed before it exits (SIGKILL by the
 * runner's time limit).
 */
import { writeFileSync } from 'node:fs';
import { reapedCpuSeconds, type FileCpu } from './cpu-times.js';

const target = process.env['TASKYARD_CPU_FILE'];
// The file is this process's alone: the processes a test starts must not overwrite it.
delete process.env['TASKYARD_CPU_FILE'];

if (target) {
  // Children are reaped before their 'exit' events fire, so by now every one the file awaited counts.
  process.on('exit', () => {
    const own = process.resourceUsage();
    const cpu: FileCpu = { own: (own.userCPUTime + own.systemCPUTime) / 1e6, children: reapedCpuSeconds() };
    writeFileSync(target, JSON.stringify(cpu));
  });
}
