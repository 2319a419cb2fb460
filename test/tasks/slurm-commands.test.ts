import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { endOfJob, jobNameOf, parseJobId, parseScontrolJob, parseSqueue, requeuedEnd, sbatchArgs } from '../../supervisor/tasks/engines/slurm-commands.js';
import { ABSENT_GRACE_MS, ABSENT_ROUNDS, ADOPT_WAIT_MS, WatchedJob } from '../../supervisor/tasks/engines/slurm-watched-job.js';

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
  t.equal(parseJobId('Submitted batch job 42\n'), '42', 'sbatch without --parsable');
  t.equal(parseJobId('Welcome to the cluster.\nQuota: 1024 hours left\nSubmitted batch job 42 on cluster c1\n'), '42', 'a site wrapper\'s banner around it');
  t.equal(parseJobId('Maintenance on the 3rd\n42\n'), '42', 'a banner above the parsable id');
  t.equal(parseJobId('2026\n42\n'), null, 'two bare numbers: no telling which is the job');
  t.equal(parseJobId('sbatch: error\n'), null);
  t.equal(parseJobId(''), null);
  t.equal(jobNameOf('slurm#x#a', 'ab12'), 'slurm#x#a@ab12', 'the job name is unique per run');
  t.same(parseScontrolJob('JobId=12 JobName=w UserId=root(0) JobState=RUNNING Reason=None Dependency=(null)\n'), { state: 'RUNNING', reason: 'None' });
  t.same(parseScontrolJob('JobId=12 JobState=TIMEOUT Reason=TimeLimit\n'), { state: 'TIMEOUT', reason: 'TimeLimit' });
  t.equal(parseScontrolJob('garbage\n'), null);
  const jobs = parseSqueue('1|RUNNING|None\n2|TIMEOUT|TimeLimit\n\n');
  t.same([...jobs.keys()], ['1', '2']);
  t.same(jobs.get('2'), { state: 'TIMEOUT', reason: 'TimeLimit' });
});

t.test('how a job ended, as the service records it', async (t) => {
  t.equal(endOfJob('1', { state: 'PENDING', reason: 'Resources' }, false), null, 'pending is alive');
  t.equal(endOfJob('1', { state: 'COMPLETING', reason: 'None' }, false), null, 'completing is alive');
  t.equal(endOfJob('1', { state: 'STATE', reason: 'REASON' }, false), null, 'a word a garbled answer made up ends nothing');
  t.same(endOfJob('1', { state: 'COMPLETED', reason: 'None' }, false), { kind: 'exited', code: 0, signal: null });
  t.match(endOfJob('7', { state: 'TIMEOUT', reason: 'TimeLimit' }, false), { kind: 'engine-ended', reason: /^Slurm job 7 ended TIMEOUT \(TimeLimit\)/ });
  t.match(endOfJob('7', { state: 'NODE_FAIL', reason: 'None' }, false), { reason: /^Slurm job 7 ended NODE_FAIL without/ });
  t.match(endOfJob('7', { state: 'CANCELLED', reason: 'None' }, false), { reason: /CANCELLED by someone other than this service/ });
  t.notMatch(endOfJob('7', { state: 'CANCELLED', reason: 'None' }, true), { reason: /someone other/ }, 'our own cancel is not blamed on someone else');
  t.match(endOfJob('7', undefined, false), { reason: /^Slurm no longer knows job 7/ });
});

t.test('a job the machine ended names the cause a retry policy matches; one a person or the code ended names none', async (t) => {
  const causeOf = (state: string) => {
    const end = endOfJob('7', { state, reason: 'None' }, false);
    return end?.kind === 'engine-ended' ? (end.cause ?? null) : end?.kind;
  };
  t.same(['NODE_FAIL', 'BOOT_FAIL', 'PREEMPTED', 'TIMEOUT', 'DEADLINE'].map(causeOf), ['node_fail', 'node_fail', 'node_fail', 'timeout', 'timeout']);
  t.same(['CANCELLED', 'FAILED', 'OUT_OF_MEMORY'].map(causeOf), [null, null, null], 'a scancel, a failed script, an OOM: not the machine failing');
  t.match(endOfJob('7', undefined, false), { cause: 'lost' }, 'a job Slurm forgot is lost');
});

t.test('a job missing from squeue is gone only after ABSENT_ROUNDS answers over ABSENT_GRACE_MS; a sighting starts over', async (t) => {
  const job = new WatchedJob('7', '/nonexistent', 'r1', null);
  let now = 1_000_000;
  for (let round = 1; round < ABSENT_ROUNDS; round++) t.equal(job.missed((now += ABSENT_GRACE_MS)), false, `round ${round} is not enough, however late`);
  t.equal(job.missed(now), true, 'enough rounds over the grace period: ask scontrol');
  job.seen();
  now += 1;
  for (let round = 1; round <= ABSENT_ROUNDS * 3; round++) t.equal(job.missed((now += 100)), false, `seen again: round ${round} of misses, ${round * 100} ms, is too short`);
  t.equal(job.missed(now + ABSENT_GRACE_MS), true);
  t.equal(job.adoptionExpired(now + ADOPT_WAIT_MS), false, 'submitted here: no adoption bound');
  const adopted = new WatchedJob('8', '/nonexistent', 'r2', now);
  t.equal(adopted.adoptionExpired(now + ADOPT_WAIT_MS - 1), false);
  t.equal(adopted.adoptionExpired(now + ADOPT_WAIT_MS), true);
  t.equal(await adopted.recordedEnd(), false, 'no record, no evidence');
});

t.test("the run's own terminal record is evidence that its job ended; another run's or a live one is not", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-watched-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const job = new WatchedJob('9', dir, 'r1', null);
  const write = (record: object) => writeFile(join(dir, 'status.json'), JSON.stringify(record));
  await write({ run_id: 'r1', state: 'running' });
  t.equal(await job.recordedEnd(), false, 'running');
  await write({ run_id: 'r0', state: 'succeeded' });
  t.equal(await job.recordedEnd(), false, 'the previous run of the Task');
  await write({ run_id: 'r1', state: 'bogus' });
  t.equal(await job.recordedEnd(), false, 'not a state');
  await write({ run_id: 'r1', state: 'succeeded' });
  t.equal(await job.recordedEnd(), true, 'its own terminal record');
});

t.test('a job queued again after it was seen running was requeued; one still waiting for its first start was not', async (t) => {
  const job = new WatchedJob('7', '/w/x', 'r1', null);
  t.notOk(job.requeued({ state: 'PENDING', reason: 'Resources' }), 'pending before it ever ran: just queued');
  t.notOk(job.requeued({ state: 'RUNNING', reason: 'None' }));
  t.ok(job.requeued({ state: 'PENDING', reason: 'BeginTime' }), 'pending after it ran: Slurm requeued it (a failed node, a preemption)');
  t.ok(job.requeued({ state: 'REQUEUED', reason: 'None' }));
  t.notOk(job.requeued({ state: 'COMPLETING', reason: 'None' }), 'an ending job is not requeued');
  t.match(requeuedEnd('7'), { kind: 'engine-ended', cause: 'node_fail', reason: /^Slurm requeued job 7 after it ran \(NODE_FAIL/ }, 'its run ends as the machine\'s failure a retry policy names');
});
