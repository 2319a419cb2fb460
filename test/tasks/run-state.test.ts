import t from 'tap';
import type { TaskStatus } from '../../schemas/tasks.js';
import { RUN_TRANSITIONS, RunState, RunStateError, settlementOf, type RunPhase } from '../../supervisor/tasks/runs/run-state.js';

const PHASES = Object.keys(RUN_TRANSITIONS) as RunPhase[];

/** A run's state brought to `phase` along legal moves only. */
function stateIn(phase: RunPhase): RunState {
  const state = new RunState('r1', phase === 'queued' || phase === 'starting' ? 'queued' : 'found');
  switch (phase) {
    case 'starting':
      state.to('starting');
      break;
    case 'running':
      state.to('running');
      break;
    case 'ended':
      state.end({ kind: 'lost', pid: null });
      state.to('ended');
      break;
    case 'published':
      state.to('running');
      state.publish(null);
      break;
    case 'left':
      state.end({ kind: 'closing' });
      state.to('left');
      break;
  }
  if (state.phase !== phase) throw new Error(`reached ${state.phase}, not ${phase}`);
  return state;
}

function status(state: TaskStatus['state'], runId = 'r1'): TaskStatus {
  return { task_id: 't#a#b', run_id: runId, task_type: 't', task_name: 'a', config: {}, state, pid: null, created_at: '', started_at: null, finished_at: null, steps: [], result: {}, error: '', exit_code: 0, log_path: '' };
}

t.test('every transition in the table is allowed, with its guard satisfied', async (t) => {
  let moves = 0;
  for (const from of PHASES) {
    for (const [to, guard] of Object.entries(RUN_TRANSITIONS[from]) as Array<[RunPhase, { needs: string } | null]>) {
      const state = stateIn(from);
      if (guard?.needs.startsWith('a reason')) state.end({ kind: 'cancel' });
      state.to(to);
      t.equal(state.phase, to, `${from} → ${to}`);
      moves++;
    }
  }
  t.equal(moves, 11, 'queued → starting | ended; found → running | ended | left; starting → running | ended; running → published | ended | left; ended → published');
});

t.test('a transition not in the table throws, naming from and to', async (t) => {
  let refused = 0;
  for (const from of PHASES) {
    for (const to of PHASES) {
      if (RUN_TRANSITIONS[from][to] !== undefined) continue;
      const state = stateIn(from);
      state.end({ kind: 'cancel' }); // so no guard is what refuses it
      t.throws(() => state.to(to), new RunStateError(`run r1: no transition from ${from} to ${to}`), `${from} → ${to}`);
      t.equal(state.phase, from, 'the phase is unchanged');
      refused++;
    }
  }
  t.equal(refused, PHASES.length * PHASES.length - 11);
});

t.test('guards: a run ends only with a reason, and a cancelled queued run does not start', async (t) => {
  t.throws(() => stateIn('queued').to('ended'), /run r1: the transition from queued to ended needs a reason to end/);
  t.throws(() => stateIn('running').to('ended'), /from running to ended needs a reason/);
  t.throws(() => stateIn('found').to('left'), /from found to left needs a reason/);
  const cancelled = stateIn('queued');
  cancelled.end({ kind: 'cancel' });
  t.throws(() => cancelled.to('starting'), /from queued to starting needs no reason to end/);
  cancelled.to('ended');
  t.throws(() => cancelled.to('starting'), /no transition from ended to starting/, 'admitting it after it ended is a bug, not a start');
});

t.test('the first reason to end the run wins (reason ??=)', async (t) => {
  const state = stateIn('running');
  t.equal(state.end({ kind: 'time-limit', seconds: 2 }), true);
  t.equal(state.end({ kind: 'cancel' }), false, 'a cancel after the time limit fired does not replace it');
  t.equal(state.end({ kind: 'exited', code: null, signal: 'SIGTERM' }), false, 'nor does the runner end it caused');
  t.same(state.reason, { kind: 'time-limit', seconds: 2 });
  const published = stateIn('published');
  t.equal(published.end({ kind: 'time-limit', seconds: 1 }), true, 'a published run that still runs can be stopped for its time limit');
  t.equal(stateIn('left').end({ kind: 'cancel' }), false, 'a run the service let go of takes no reason');
});

t.test('statuses a run may show: its queued record at submit, then never a step back, nothing after its end', async (t) => {
  const queued = stateIn('queued');
  t.equal(queued.show(status('running')), false, 'not running before it runs');
  t.equal(queued.show(status('queued')), true, 'the submit shows its queued record');
  t.equal(queued.show(status('queued')), false, 'once');
  const running = stateIn('running');
  t.equal(running.show(status('running', 'r2')), false, "another run's status");
  t.equal(running.show(status('running')), true);
  t.equal(running.show(status('running')), true, 'a running record with new steps');
  t.equal(running.show(status('queued')), false, 'never back to queued');
  t.equal(running.show(status('succeeded')), false, 'a terminal status is published, not shown');
  t.equal(running.publish(status('succeeded')), true);
  t.equal(running.show(status('running')), false, 'a running after the published terminal status is refused');
  t.equal(running.publish(status('failed')), false, 'published once');
  t.same(running.terminal, status('succeeded'));
  for (const phase of ['starting', 'ended', 'left'] as const) t.equal(stateIn(phase).show(status('running')), false, `nothing shown while ${phase}`);
});

t.test('publishing: only from running or ended, only this run', async (t) => {
  t.throws(() => stateIn('queued').publish(null), /no transition from queued to published/);
  t.throws(() => stateIn('starting').publish(null), /no transition from starting to published/);
  t.throws(() => stateIn('running').publish(status('failed', 'r2')), /run r1: cannot publish the status of run r2/);
  const cancelled = stateIn('running');
  t.equal(cancelled.end({ kind: 'cancel' }), true);
  cancelled.to('ended');
  cancelled.publish(status('cancelled'), true);
  t.equal(cancelled.cancelledHere, true, 'the cancel caused the record the service wrote');
  const runnerWrote = stateIn('running');
  runnerWrote.end({ kind: 'cancel' });
  runnerWrote.publish(status('cancelled'));
  t.equal(runnerWrote.cancelledHere, false, 'a record the runner wrote was not caused here');
});

t.test('until resolves at the phase change or reason it waits for', async (t) => {
  const state = stateIn('queued');
  const order: string[] = [];
  const admitted = state.until(() => state.phase !== 'queued').then(() => order.push(`admitted:${state.phase}`));
  const stop = state.until(() => state.reason !== undefined).then(() => order.push(`stop:${state.reason?.kind}`));
  const published = state.until(() => state.phase === 'published').then(() => order.push('published'));
  state.to('starting');
  await admitted;
  state.to('running');
  state.end({ kind: 'cancel' });
  await stop;
  state.to('ended');
  state.publish(null);
  await published;
  t.same(order, ['admitted:starting', 'stop:cancel', 'published']);
});

t.test('settlementOf: what each reason tells the record', async (t) => {
  t.same(settlementOf({ kind: 'cancel' }), { end: null, cancelled: true });
  t.same(settlementOf({ kind: 'not-started' }), { end: null, cancelled: false });
  t.same(settlementOf({ kind: 'time-limit', seconds: 3 }), { end: { kind: 'time-limit', seconds: 3 }, cancelled: false });
  t.same(settlementOf({ kind: 'spawn-failed', message: 'no' }), { end: { kind: 'spawn-failed', message: 'no' }, cancelled: false });
  t.same(settlementOf({ kind: 'lost', pid: 7 }), { end: { kind: 'lost', pid: 7 }, cancelled: false });
});
