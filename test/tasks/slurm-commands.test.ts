import t from 'tap';
import { endOfJob, parseJobId, parseSqueue, sbatchArgs } from '../../supervisor/tasks/slurm-commands.js';

const files = { jobName: 'base#demo#x', cwd: '/w/base/x', logFile: '/w/base/x/task.log', envFile: '/s/r.env', script: '/s/r.sh' };

t.test('sbatch arguments: files, the environment file, resources, then the configured extras', async (t) => {
  const args = sbatchArgs(files, { cpus: 2, gpus: 1, memory_mb: 512, time_limit_s: 90 }, { kind: 'slurm', partition: 'gpu', account: 'lab', sbatch_args: ['--qos=low'] });
  t.same(args, [
    '--parsable', '--job-name=base#demo#x', '--chdir=/w/base/x', '--output=/w/base/x/task.log', '--error=/w/base/x/task.log', '--open-mode=append',
    '--export-file=/s/r.env', '--cpus-per-task=2', '--gres=gpu:1', '--mem=512M', '--time=1:30', '--partition=gpu', '--account=lab', '--qos=low', '/s/r.sh',
  ]);
  const plain = sbatchArgs(files, { gpus: 0 }, { kind: 'slurm', sbatch_args: [] });
  t.notOk(plain.some((a) => /^--(gres|cpus-per-task|mem|time|partition|account)/.test(a)), 'nothing asked, nothing passed');
  t.notOk(plain.some((a) => a.startsWith('--export=')), 'never --export (it cuts values at commas)');
});

t.test('job ids and squeue lines', async (t) => {
  t.equal(parseJobId('42\n'), '42');
  t.equal(parseJobId('42;cluster\n'), '42');
  t.throws(() => parseJobId('sbatch: error\n'), /sbatch printed no job id/);
  const jobs = parseSqueue('1|RUNNING|None\n2|TIMEOUT|TimeLimit\n\n');
  t.same([...jobs.keys()], ['1', '2']);
  t.same(jobs.get('2'), { state: 'TIMEOUT', reason: 'TimeLimit' });
});

t.test('how a job ended, as the service records it', async (t) => {
  t.equal(endOfJob('1', { state: 'PENDING', reason: 'Resources' }, false), null, 'pending is alive');
  t.equal(endOfJob('1', { state: 'COMPLETING', reason: 'None' }, false), null, 'completing is alive');
  t.same(endOfJob('1', { state: 'COMPLETED', reason: 'None' }, false), { kind: 'exited', code: 0, signal: null });
  t.match(endOfJob('7', { state: 'TIMEOUT', reason: 'TimeLimit' }, false), { kind: 'engine-ended', reason: /^Slurm job 7 ended TIMEOUT \(TimeLimit\)/ });
  t.match(endOfJob('7', { state: 'NODE_FAIL', reason: 'None' }, false), { reason: /^Slurm job 7 ended NODE_FAIL without/ });
  t.match(endOfJob('7', { state: 'CANCELLED', reason: 'None' }, false), { reason: /CANCELLED by someone other than this service/ });
  t.notMatch(endOfJob('7', { state: 'CANCELLED', reason: 'None' }, true), { reason: /someone other/ }, 'our own cancel is not blamed on someone else');
  t.match(endOfJob('7', undefined, false), { reason: /^Slurm no longer knows job 7/ });
});
