import t from 'tap';
import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { validateConfig } from '../../supervisor/common/config.js';
import { checkedLookup } from '../../supervisor/common/host-check.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';
import { killTaskProcesses, makeWorkspace, submitOk, waitTask } from '../tasks/task-helpers.js';
import { exited, startServiceProcess } from '../helpers/service-process.js';
import { closedPort, startReceiver, type Received } from './receiver.js';

const SECRET = 'whsec-0123456789abcdef';
const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** The documented check (docs/how-to/webhooks.md): HMAC-SHA256 over `timestamp + "." + raw body`. */
const verifies = (got: Received, secret: string) => got.signature === `v1=${createHmac('sha256', secret).update(`${got.timestamp}.${got.body}`).digest('hex')}`;

const webhookConfig = (url: string, events = ['task.succeeded', 'task.failed', 'task.cancelled', 'task.retrying']) => ({ webhooks: [{ url, events, secret: SECRET }] });

async function statusOfHooks(svc: TestService) {
  const reply = await svc.call('webhook_status');
  if (!reply.body.success) throw new Error(`webhook_status failed: ${JSON.stringify(reply.body)}`);
  return reply.body.answer;
}

t.test('each Task end is one signed delivery: verifies with the secret, not with another; one per Task; metrics and webhook_status count them', async (t) => {
  const receiver = await startReceiver(t);
  const svc = await startTestService(t, { config: webhookConfig(receiver.url) });
  const good = await submitOk(t, svc, { task: 'demo', x: 1, y: 2 });
  const bad = await submitOk(t, svc, { task: 'demo', x: 1, y: 2, fail: true });
  t.equal((await waitTask(svc, good)).status.state, 'succeeded');
  t.equal((await waitTask(svc, bad)).status.state, 'failed');
  await waitFor(() => receiver.accepted.size === 2, 15_000, 'two deliveries');
  await waitFor(async () => (await statusOfHooks(svc))[0]!.pending === 0, 5000, 'outbox empty');
  t.equal(receiver.received.length, 2, 'exactly one request per Task end');
  for (const got of receiver.received) {
    t.ok(verifies(got, SECRET), `${got.type}: the signature verifies with the secret`);
    t.notOk(verifies(got, 'another-secret-0123456789'), `${got.type}: not with another secret`);
    t.ok(Math.abs(Date.now() / 1000 - Number(got.timestamp)) < 300, 'timestamp is now (unix seconds)');
    const envelope = JSON.parse(got.body) as { version: number; id: string; type: string; created_at: string; data: { registration: string; status: { task_id: string; state: string } } };
    t.equal(envelope.version, 1);
    t.equal(envelope.id, got.id, 'the header carries the envelope id');
    t.equal(envelope.type, got.type);
    t.equal(envelope.data.registration, 'demo');
    t.match(envelope.created_at, /^\d{4}-\d\d-\d\dT/);
  }
  const byTask = new Map(receiver.received.map((g) => { const e = JSON.parse(g.body); return [e.data.status.task_id, e.type]; }));
  t.same(Object.fromEntries(byTask), { [good.task_id]: 'task.succeeded', [bad.task_id]: 'task.failed' });
  t.same([...receiver.accepted.values()], [1, 1], 'each event id accepted once');
  const [hook] = await statusOfHooks(svc);
  t.match(hook, { url: receiver.url, pending: 0, delivered: 2, given_up: 0, last_error: null });
  t.ok(hook!.last_delivery_at);
  t.notOk(JSON.stringify(await statusOfHooks(svc)).includes(SECRET), 'the secret is never shown');
  const metrics = await (await svc.fetch('/metrics')).text();
  t.match(metrics, /^taskyard_webhook_deliveries_total 2$/m);
  t.match(metrics, /^taskyard_webhook_pending 0$/m);
  t.match(metrics, /^taskyard_webhook_failed_attempts_total 0$/m);
  t.match(metrics, /^taskyard_webhook_given_up_total 0$/m);
  const jobs = ((await (await svc.fetch('/jobs')).json()) as { answer: { items: Array<{ name: string }> } }).answer.items.map((j) => j.name);
  t.ok(jobs.includes('webhook_status'), 'webhook_status is in the catalog');
  const mcp = await connectMcp(t, svc.url, svc.token);
  const viaMcp = await mcp.callTool({ name: 'webhook_status', arguments: {} });
  t.match(viaMcp.structuredContent, { answer: [{ url: receiver.url, delivered: 2 }] }, 'and an MCP tool');
  const open = await svc.fetch('/jobs/webhook_status', { method: 'POST', headers: { authorization: '', 'content-type': 'application/json' }, body: '{"arguments":{}}' });
  t.equal(open.status, 401, 'requires_auth by default');
});

t.test('an endpoint gets only the events it subscribed to', async (t) => {
  const receiver = await startReceiver(t);
  const svc = await startTestService(t, { config: webhookConfig(receiver.url, ['task.failed']) });
  const good = await submitOk(t, svc, { task: 'demo', x: 1, y: 1 });
  const bad = await submitOk(t, svc, { task: 'demo', x: 1, y: 1, fail: true });
  await waitTask(svc, good);
  await waitTask(svc, bad);
  await waitFor(() => receiver.received.length >= 1, 15_000, 'the failure delivered');
  await waitFor(async () => (await statusOfHooks(svc))[0]!.pending === 0, 5000, 'outbox empty');
  t.same(receiver.received.map((g) => g.type), ['task.failed']);
});

t.test('a receiver that is down gets the delivery later, same event id, counted as failed attempts meanwhile', async (t) => {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}/hook`;
  const svc = await startTestService(t, { config: webhookConfig(url) });
  const handle = await submitOk(t, svc, { task: 'demo', x: 3, y: 4 });
  await waitTask(svc, handle);
  const failing = await waitFor(async () => { const [h] = await statusOfHooks(svc); return h!.last_error ? h : null; }, 15_000, 'a failed attempt');
  t.match(failing, { pending: 1, delivered: 0 });
  t.match(failing.last_error, /ECONNREFUSED/);
  t.match(await (await svc.fetch('/metrics')).text(), /^taskyard_webhook_pending 1$/m);
  const receiver = await startReceiver(t, port);
  await waitFor(() => receiver.accepted.size === 1, 20_000, 'delivered once the receiver is up');
  await waitFor(async () => (await statusOfHooks(svc))[0]!.pending === 0, 5000, 'outbox empty');
  t.equal(receiver.received.length, 1, 'one request once it is up');
  t.equal(JSON.parse(receiver.received[0]!.body).data.status.task_id, handle.task_id);
  const metrics = await (await svc.fetch('/metrics')).text();
  t.match(metrics, /^taskyard_webhook_deliveries_total 1$/m);
  t.notMatch(metrics, /^taskyard_webhook_failed_attempts_total 0$/m, 'the refused attempts are counted');
});

t.test('a restart mid-delivery delivers after the restart with the same event id; the outbox is on disk meanwhile', async (t) => {
  const receiver = await startReceiver(t);
  receiver.mode = 'hold';
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-webhooks-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const first = await startTestService(t, { workspace, config: webhookConfig(receiver.url) });
  const handle = await submitOk(t, first, { task: 'demo', x: 5, y: 6 });
  await waitTask(first, handle);
  await waitFor(() => receiver.received.length === 1, 15_000, 'the request arrives and is held');
  const eventId = receiver.received[0]!.id;
  await first.close();
  const outbox = join(workspace, '.taskyard', 'webhooks', 'outbox');
  const [key] = await readdir(outbox);
  t.same(await readdir(join(outbox, key!)), [`${eventId}.json`], 'the delivery is on disk while unacknowledged');
  receiver.mode = 'ok';
  const second = await startTestService(t, { workspace, config: webhookConfig(receiver.url) });
  await waitFor(() => receiver.accepted.size === 1, 15_000, 'delivered after the restart');
  t.same([...receiver.accepted.keys()], [eventId], 'the same event id');
  t.ok(verifies(receiver.received.at(-1)!, SECRET));
  await waitFor(async () => (await statusOfHooks(second))[0]!.pending === 0, 5000, 'outbox empty');
  t.same(await readdir(join(outbox, key!)), [], 'removed once acknowledged');
  t.equal(receiver.received.length, 2, 'the held attempt and the one after the restart, nothing more');
});

t.test('a host that is not loopback and not in webhook_hosts is refused at config load, naming the fix', async (t) => {
  const bad = { service: {}, webhooks: [{ url: 'http://hooks.example.org/x', events: ['task.failed'], secret: SECRET }] };
  t.throws(() => validateConfig(bad, 'test'), /webhooks\.0\.url: host hooks\.example\.org is not loopback; add it to the top-level webhook_hosts list/);
  t.throws(() => validateConfig({ ...bad, webhooks: [{ ...bad.webhooks[0], url: 'http://169.254.169.254/latest' }] }, 'test'), /host 169\.254\.169\.254 is not loopback/);
  t.doesNotThrow(() => validateConfig({ ...bad, webhook_hosts: ['hooks.example.org'] }, 'test'), 'listed: allowed');
  t.throws(() => validateConfig({ ...bad, webhooks: [{ ...bad.webhooks[0], secret: 'short' }] }, 'test'), /webhooks\.0\.secret/);
  t.throws(() => validateConfig({ ...bad, webhooks: [{ ...bad.webhooks[0], events: ['task.exploded'] }] }, 'test'), /webhooks\.0\.events/);
});

t.test('at connect time, a name that resolves outside its allowed class is refused', async (t) => {
  const lookup = (allowed: 'public' | 'loopback') =>
    new Promise<string>((resolve) => checkedLookup(allowed)('localhost', {}, (err, address) => resolve(err ? err.message : String(address))));
  t.match(await lookup('public'), /localhost resolves to 127\.0\.0\.1 \(loopback\).*not a public address: refused/);
  t.equal(await lookup('loopback'), '127.0.0.1');
});

t.test('a cancelled Task is one task.cancelled (to a localhost URL: resolved, checked, connected)', async (t) => {
  const receiver = await startReceiver(t);
  const svc = await startTestService(t, { config: webhookConfig(receiver.url.replace('127.0.0.1', 'localhost')) });
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 60 });
  t.equal((await svc.call('cancel', { task_id: handle.task_id })).body.answer, true);
  await waitTask(svc, handle);
  await waitFor(() => receiver.accepted.size === 1, 15_000, 'the cancellation delivered');
  await waitFor(async () => (await statusOfHooks(svc))[0]!.pending === 0, 5000, 'outbox empty');
  t.same(receiver.received.map((g) => g.type), ['task.cancelled']);
  t.equal(JSON.parse(receiver.received[0]!.body).data.status.state, 'cancelled');
});

t.test("docs/how-to/webhooks.md's Python and Node verification snippets accept a real delivery and refuse a wrong secret", async (t) => {
  const receiver = await startReceiver(t);
  const svc = await startTestService(t, { config: webhookConfig(receiver.url, ['task.succeeded']) });
  await waitTask(svc, await submitOk(t, svc, { task: 'demo', x: 2, y: 2 }));
  await waitFor(() => receiver.accepted.size === 1, 15_000, 'the delivery');
  const got = receiver.received[0]!;
  const docs = await readFile(join(REPO, 'docs', 'how-to', 'webhooks.md'), 'utf8');
  const blocks = [...docs.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2]! }));
  const python = blocks.find((b) => b.lang === 'python')!.code;
  const node = blocks.find((b) => b.lang === 'js')!.code;
  const headers = { 'X-Taskyard-Timestamp': got.timestamp, 'X-Taskyard-Signature': got.signature };
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  for (const [secret, expected] of [[SECRET, 'True'], ['wrong-secret-0123456789', 'False']] as const) {
    const py = `${python}\nimport json, sys\nh = json.loads(sys.argv[1])\nprint(verify(sys.argv[2], h, sys.argv[3].encode()))\n`;
    t.equal((await run('/usr/bin/python3', ['-c', py, JSON.stringify(headers), secret, got.body])).stdout.trim(), expected, `Python: ${expected}`);
    const js = `${node}\nconst [h, s, b] = process.argv.slice(1);\nconsole.log(verify(s, JSON.parse(h), Buffer.from(b)) ? 'True' : 'False');\n`;
    t.equal((await run(process.execPath, ['-e', js, JSON.stringify(lower), secret, got.body])).stdout.trim(), expected, `Node: ${expected}`);
  }
});

t.test('after max_attempts a delivery is given up: moved to failed/ with its last error, counted, still visible after a restart', async (t) => {
  const port = await closedPort();
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-webhooks-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const config = { webhooks: [{ url: `http://127.0.0.1:${port}/hook`, events: ['task.succeeded'], secret: SECRET, max_attempts: 2 }] };
  const first = await startTestService(t, { workspace, config });
  await waitTask(first, await submitOk(t, first, { task: 'demo', x: 1, y: 1 }));
  const gone = await waitFor(async () => { const [h] = await statusOfHooks(first); return h!.given_up === 1 ? h : null; }, 15_000, 'given up');
  t.match(gone, { pending: 0, delivered: 0, given_up: 1, last_error: /ECONNREFUSED/ });
  const metrics = await (await first.fetch('/metrics')).text();
  t.match(metrics, /^taskyard_webhook_given_up_total 1$/m);
  t.match(metrics, /^taskyard_webhook_failed_attempts_total 2$/m);
  t.match(metrics, /^taskyard_webhook_pending 0$/m);
  const failedDir = join(workspace, '.taskyard', 'webhooks', 'failed');
  const [key] = await readdir(failedDir);
  const [file] = await readdir(join(failedDir, key!));
  const kept = JSON.parse(await readFile(join(failedDir, key!, file!), 'utf8')) as { attempts: number; last_error: string; body: string };
  t.equal(kept.attempts, 2);
  t.match(kept.last_error, /ECONNREFUSED/);
  t.equal(JSON.parse(kept.body).type, 'task.succeeded');
  t.same(await readdir(join(workspace, '.taskyard', 'webhooks', 'outbox', key!)), [], 'no longer pending');
  await first.close();
  const second = await startTestService(t, { workspace, config });
  t.match((await statusOfHooks(second))[0], { pending: 0, given_up: 1 }, 'still visible after a restart');
});

t.test('a retried Task is one task.retrying per retry and one final event: never the failure a retry replaced', async (t) => {
  const receiver = await startReceiver(t);
  const config = { ...webhookConfig(receiver.url), tasks: { command: { retries: { max: 2, on: [], exit_codes: [3] } } } };
  const svc = await startTestService(t, { config });
  const flaky = await submitOk(t, svc, { task: 'command', argv: ['sh', '-c', 'if [ -e attempted ]; then exit 0; else touch attempted; exit 3; fi'] });
  const final = (await svc.call('wait_task', { task_id: flaky.task_id, run_id: flaky.run_id })).body.answer;
  t.equal(final.state, 'succeeded');
  await waitFor(() => receiver.accepted.size === 2, 15_000, 'two deliveries');
  await waitFor(async () => (await statusOfHooks(svc))[0]!.pending === 0, 5000, 'outbox empty');
  const events = receiver.received.map((g) => JSON.parse(g.body) as { type: string; data: { status: { run_id: string; state: string }; next_run_id?: string; attempt?: number; cause?: string } });
  t.same(events.map((e) => e.type).sort(), ['task.retrying', 'task.succeeded'], 'one retry, one final success, no task.failed');
  const retrying = events.find((e) => e.type === 'task.retrying')!;
  t.match(retrying.data, { status: { run_id: flaky.run_id, state: 'failed' }, next_run_id: final.run_id, attempt: 1, cause: 'exit_code' });
  t.equal(events.find((e) => e.type === 'task.succeeded')!.data.status.run_id, final.run_id, 'the final event is the final run');
});

t.test('a run a restart finds dead is announced too: its task.failed reaches the endpoint from the next service', async (t) => {
  const receiver = await startReceiver(t);
  const workspace = await makeWorkspace(t);
  t.teardown(() => killTaskProcesses(workspace));
  const config = join(workspace, 'hooks.json');
  await writeFile(config, JSON.stringify({ service: { runner_pool_size: 1, gpus: 0 }, machine: { history: { enabled: false } }, ...webhookConfig(receiver.url) }));
  const first = await startServiceProcess(t, workspace, { config });
  const handle = (await first.call('submit', { task: 'sleep', seconds: 600 })).answer;
  await waitFor(async () => (await first.call('status', { task_id: handle.task_id })).answer.state === 'running', 20_000, 'the Task to run');
  first.child.kill('SIGKILL');
  await exited(first.child);
  await killTaskProcesses(workspace);
  const second = await startTestService(t, { workspace, config: webhookConfig(receiver.url) });
  await waitFor(() => receiver.accepted.size === 1, 15_000, 'the delivery of the run settled at the start');
  const envelope = JSON.parse(receiver.received[0]!.body) as { type: string; data: { status: { task_id: string; error: string } } };
  t.equal(envelope.type, 'task.failed');
  t.equal(envelope.data.status.task_id, handle.task_id);
  t.match(envelope.data.status.error, /worker lost/);
  t.ok(second);
});
