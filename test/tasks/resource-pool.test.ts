import t from 'tap';
import { ResourcePool } from '../../supervisor/tasks/runs/resource-pool.js';

const holder = (n: number) => ({ taskId: `t${n}`, runId: `r${n}` });

t.test('GPUs are leased by index, lowest free first, and given back', async (t) => {
  const pool = new ResourcePool({ cpus: 4, gpus: 3, gpuVendor: 'nvidia' });
  const a = pool.tryLease({ gpus: 2 }, holder(1))!;
  t.same(a.gpus, [0, 1]);
  t.equal(pool.tryLease({ gpus: 2 }, holder(2)), null, 'two are not free');
  const b = pool.tryLease({ gpus: 1, cpus: 4 }, holder(3))!;
  t.same(b.gpus, [2]);
  t.equal(pool.tryLease({ cpus: 1 }, holder(4)), null, 'no CPU is free');
  t.same(pool.gpuLeases(), [{ index: 0, task_id: 't1', run_id: 'r1' }, { index: 1, task_id: 't1', run_id: 'r1' }, { index: 2, task_id: 't3', run_id: 'r3' }]);
  t.same(pool.environmentOf(a), { CUDA_VISIBLE_DEVICES: '0,1' });
  pool.release(a);
  t.same(pool.tryLease({ gpus: 1 }, holder(5))!.gpus, [0]);
  t.same(pool.tryLease({}, holder(6)), { cpus: 0, gpus: [] }, 'asking for nothing takes nothing');
});

t.test('AMD devices are hidden through HIP_VISIBLE_DEVICES; no GPUs, no variable', async (t) => {
  const amd = new ResourcePool({ cpus: 1, gpus: 2, gpuVendor: 'amd' });
  t.same(amd.environmentOf(amd.tryLease({ gpus: 1 }, holder(1))!), { HIP_VISIBLE_DEVICES: '0' });
  t.same(amd.environmentOf(amd.tryLease({}, holder(2))!), { HIP_VISIBLE_DEVICES: '' }, 'a run without GPUs sees none');
  const none = new ResourcePool({ cpus: 1, gpus: 0, gpuVendor: 'nvidia' });
  t.same(none.environmentOf(none.tryLease({}, holder(3))!), {});
});

t.test('asking for more than the machine has is refused, naming both numbers', async (t) => {
  const pool = new ResourcePool({ cpus: 2, gpus: 2, gpuVendor: 'nvidia' });
  t.throws(() => pool.check('train', { gpus: 3 }), /task train asks for 3 GPUs but this machine has 2/);
  t.throws(() => pool.check('train', { cpus: 8 }), /task train asks for 8 CPUs but this machine has 2/);
  t.doesNotThrow(() => pool.check('train', { gpus: 2, cpus: 2 }));
});
