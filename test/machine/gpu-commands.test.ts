import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { commandFound, presentGpuCommands, probeGpuProcessMemory, probeGpus } from '../../supervisor/machine/gpu-probe.js';

t.test('a GPU tool is found as a path or a name on PATH, and only as an executable file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-gpu-commands-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const tool = join(dir, 'fake-smi');
  await writeFile(tool, '#!/bin/sh\nexit 0\n');
  t.notOk(commandFound(tool), 'a file that is not executable is not a tool');
  await chmod(tool, 0o755);
  t.ok(commandFound(tool), 'an executable file by its path');
  t.ok(commandFound('fake-smi', `/nonexistent:${dir}`), 'and by its name on PATH');
  t.notOk(commandFound('fake-smi', '/nonexistent'), 'not on another PATH');
  t.notOk(commandFound(dir), 'a directory is not a tool');
  t.notOk(commandFound('taskyard-no-such-tool'), 'a name on no PATH directory');
});

t.test('the sampler asks only for the tools that are there, and looks again after a while', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-gpu-commands-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const later = join(dir, 'nvidia-smi');
  const commands = { nvidiaSmi: later, rocmSmi: join(dir, 'rocm-smi') };
  const cached = presentGpuCommands(commands, 60_000);
  const always = presentGpuCommands(commands, 0);
  t.same(cached(), { nvidiaSmi: '', rocmSmi: '' }, 'missing tools are blanked');
  t.same(always(), { nvidiaSmi: '', rocmSmi: '' });
  t.same(await probeGpus(cached()), [], 'and a blank tool is not run: no devices');
  t.equal(await probeGpuProcessMemory(cached().nvidiaSmi), null, 'no per-process GPU memory either');
  await writeFile(later, '#!/bin/sh\nexit 0\n');
  await chmod(later, 0o755);
  t.equal(cached().nvidiaSmi, '', 'a tool installed meanwhile is not looked for before the recheck is due');
  t.equal(always().nvidiaSmi, later, 'once it is due, the tool is found');
});
