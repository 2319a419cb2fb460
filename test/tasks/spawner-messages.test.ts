import { fork } from 'node:child_process';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { RUN_ASSIGNMENTS, RUNNER_EVENTS, SPAWNER_EVENTS, SPAWNER_ORDERS, type SpawnerEvent, type StartSpec } from '../../runner/spawner-messages.js';
import type { Checked } from '../../runner/message-check.js';
import { waitFor } from '../helpers/wait-for.js';

const spec: StartSpec = { runId: 'a'.repeat(32), cwd: '/w/demo/t1', logFile: '/w/demo/t1/task.log', env: { TASKYARD_RUN_ID: 'a'.repeat(32) }, resources: { cpus: 2 }, taskId: 't1' };

/** The error of a refused message (fails the test when it was let through). */
function refusal<U>(t: Test, checked: Checked<U>): string {
  if (checked.ok) {
    t.fail(`let through: ${JSON.stringify(checked.message)}`);
    return '';
  }
  return checked.error;
}

t.test('well-formed messages of every kind pass, typed, in each direction', async (t) => {
  const orders = [{ type: 'spawn', ...spec }, { type: 'taken', pid: 12, waiting: 0 }, { type: 'kept', pid: 12, waiting: 1 }, { type: 'back', pid: 12 }, { type: 'want', waiting: 3 }];
  for (const order of orders) t.same(SPAWNER_ORDERS.check(order), { ok: true, message: order }, order.type);
  const events: SpawnerEvent[] = [
    { type: 'spawned', runId: spec.runId, pid: 7, startedAt: null },
    { type: 'spawn-failed', runId: spec.runId, message: 'ENOENT' },
    { type: 'ready', pid: 8 },
    { type: 'idle-limit', max: 4 },
    { type: 'pool-failing', message: 'runners exit' },
    { type: 'exited', pid: 7, code: 0, signal: null },
    { type: 'exited', pid: 7, code: null, signal: 'SIGKILL' },
  ];
  for (const event of events) t.same(SPAWNER_EVENTS.check(event), { ok: true, message: event }, event.type);
  t.same(RUN_ASSIGNMENTS.parse(JSON.stringify({ type: 'run', ...spec })), { ok: true, message: { type: 'run', ...spec } });
  for (const line of ['{"type":"ready"}', '{"type":"accepted","startedAt":"2026-01-01T00:00:00.000Z","reusable":false}', '{"type":"accepted","startedAt":null,"reusable":true}', '{"type":"declined","message":"EXDEV"}', '{"type":"ended","exitCode":3}']) {
    t.ok(RUNNER_EVENTS.parse(line).ok, line);
  }
  t.ok(SPAWNER_EVENTS.check({ type: 'ready', pid: 8, extra: true }).ok, 'a field the shape does not name is let through');
});

t.test('each kind of bad message is refused with what was wrong', async (t) => {
  t.match(refusal(t, RUNNER_EVENTS.parse('not json')), /^a runner message was refused: not JSON \(.+\): "not json"$/);
  t.match(refusal(t, SPAWNER_EVENTS.check(null)), /^a spawner to service message was refused: not an object: null$/);
  t.match(refusal(t, SPAWNER_EVENTS.check([1])), /not an object: \[1\]/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ pid: 3 })), /unknown type nothing/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'explode' })), /unknown type "explode"/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'toString' })), /unknown type "toString"/, 'a name every object has is no kind');
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'ready' })), /ready\.pid is nothing, not a process id/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'ready', pid: '8' })), /ready\.pid is "8", not a process id/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'ready', pid: -1 })), /ready\.pid is -1/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'exited', pid: 7, code: 1.5, signal: null })), /exited\.code is 1\.5, not an exit code or null/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'exited', pid: 7, code: null, signal: 'KILL' })), /exited\.signal is "KILL", not a signal name or null/);
  t.match(refusal(t, SPAWNER_EVENTS.check({ type: 'spawned', runId: spec.runId, pid: 7, startedAt: 'now' })), /spawned\.startedAt is "now", not null/);
  t.match(refusal(t, SPAWNER_ORDERS.check({ type: 'want', waiting: -2 })), /^a service to spawner message was refused: want\.waiting is -2, not a whole number >= 0$/);
  t.match(refusal(t, SPAWNER_ORDERS.check({ type: 'spawn', ...spec, env: { A: 1 } })), /spawn\.env is \{"A":1\}, not an object of strings/);
  t.match(refusal(t, SPAWNER_ORDERS.check({ type: 'spawn', ...spec, cwd: '' })), /spawn\.cwd is "", not a non-empty string/);
  t.match(refusal(t, SPAWNER_ORDERS.check({ type: 'spawn', ...spec, resources: { cpus: 'many' } })), /spawn\.resources is \{"cpus":"many"\}, not an object of whole numbers/);
  t.match(refusal(t, RUN_ASSIGNMENTS.parse(JSON.stringify({ type: 'run', ...spec, logFile: null }))), /^a service to runner message was refused: run\.logFile is null/);
  t.match(refusal(t, RUNNER_EVENTS.parse('{"type":"accepted","startedAt":5,"reusable":false}')), /accepted\.startedAt is 5, not a string or null/);
  t.match(refusal(t, RUNNER_EVENTS.parse('{"type":"accepted","startedAt":null,"reusable":"yes"}')), /accepted\.reusable is "yes", not true or false/);
  t.match(refusal(t, RUNNER_EVENTS.parse('{"type":"ended","exitCode":-1}')), /ended\.exitCode is -1, not a whole number >= 0/);
  const long = refusal(t, RUNNER_EVENTS.parse(`{"type":"declined","message":{"text":"${'x'.repeat(500)}"}}`));
  t.ok(long.length < 200, 'a long value is shown cut short');
});

t.test('the spawner answers a malformed order with why, ignores an unknown one, and goes on', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-spawner-orders-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const spawnerFile = fileURLToPath(new URL('../../runner/spawner.js', import.meta.url));
  const errFile = join(dir, 'spawner.err');
  await writeFile(errFile, '');
  const err = await open(errFile, 'a');
  // No pool (no arguments): it only starts runners on orders. Not the test runner's flags and
  // hooks (they talk on the same channel), as the executor starts it.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS'));
  const spawner = fork(spawnerFile, [], { execArgv: ['--no-warnings'], env, stdio: ['ignore', 'ignore', err.fd, 'ipc'], serialization: 'json' });
  t.teardown(async () => {
    if (spawner.connected) spawner.disconnect();
    await err.close();
  });
  const events: unknown[] = [];
  spawner.on('message', (event) => events.push(event));
  spawner.send({ type: 'spawn', runId: 'r1', cwd: dir });
  await waitFor(async () => events.length > 0, 10_000, 'the spawner answers the malformed spawn');
  t.match(events[0], { type: 'spawn-failed', runId: 'r1', message: /spawn\.logFile is nothing, not a non-empty string/ });
  spawner.send({ type: 'explode', now: true });
  spawner.send('not even an object');
  await waitFor(async () => /unknown type "explode"; ignored/.test(await readFile(errFile, 'utf8')) && /not an object: "not even an object"; ignored/.test(await readFile(errFile, 'utf8')), 10_000, 'the refusals are logged');
  // Still serving: a well-formed order is carried out (its log cannot be opened here: answered as such).
  spawner.send({ type: 'spawn', ...spec, runId: 'r2', cwd: dir, logFile: join(dir, 'missing', 'task.log') });
  await waitFor(async () => events.length > 1, 10_000, 'the spawner answers the next order');
  t.match(events[1], { type: 'spawn-failed', runId: 'r2', message: /ENOENT/ });
  t.equal(spawner.exitCode, null, 'the spawner is still running');
});
