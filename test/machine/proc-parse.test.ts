import t from 'tap';
import { parsePhysicalCores, parseProcStat, usageBetween } from '../../supervisor/machine/cpu-usage.js';
import { parseMeminfo } from '../../supervisor/machine/memory-info.js';
import { parseStat } from '../../workers/process-tree.js';

t.test('/proc/stat CPU times and usage', async (t) => {
  const before = parseProcStat('cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n');
  const after = parseProcStat('cpu  250 0 100 850 50 0 0 0 0 0\n');
  t.same(before, { busy: 150, total: 1000 });
  t.equal(usageBetween(before!, after!), 80);
  t.equal(usageBetween(after!, after!), 0, 'no elapsed time is 0 %');
  t.equal(parseProcStat('intr 1 2 3'), undefined);
});

t.test('/proc/cpuinfo physical cores', async (t) => {
  const twoSocketsHt = [0, 1].flatMap((socket) => [0, 1, 0, 1].map((core) => `processor\t: x\nphysical id\t: ${socket}\ncore id\t\t: ${core}\n`)).join('\n');
  t.equal(parsePhysicalCores(twoSocketsHt), 4, 'hyperthreads and sockets counted right');
  t.equal(parsePhysicalCores('processor\t: 0\nmodel name\t: ARMv8\n\nprocessor\t: 1\n'), null, 'unknown without core ids');
});

t.test('/proc/meminfo uses MemAvailable', async (t) => {
  const info = parseMeminfo('MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    4000000 kB\n');
  t.same(info, { total_bytes: 16000000 * 1024, used_bytes: 12000000 * 1024, available_bytes: 4000000 * 1024, usage_percent: 75 });
  t.equal(parseMeminfo('nothing'), undefined);
});

t.test('/proc/<pid>/stat with a hostile command name', async (t) => {
  const line = '4242 (evil) name (x) S 7 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615';
  t.match(parseStat(line), { pid: 4242, state: 'S', ppid: 7, pgid: 4242, startTime: '987654' });
  t.equal(parseStat('garbage'), undefined);
});

