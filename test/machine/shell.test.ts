// Runs on every HTTP front end.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ShellOutput } from '../../schemas/machine.js';
import { validateConfig } from '../../supervisor/common/config.js';
import { startService } from '../../app/service.js';
import { isAlive } from '../../workers/process-tree.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { parseSse, startTestService, waitFor } from '../helpers/service.js';

const MiB = 1024 * 1024;

// One service for the whole file: each test uses its own pid files in the shared workspace.
const svc = await startTestService(t);

/** Reads a pid (and optional extra fields) a command wrote into the workspace. */
/** The numbers a command wrote to a file; rejects until they are whole (the shell creates it empty first). */
async function readPidFile(workspace: string, name: string): Promise<number[]> {
  const text = (await readFile(join(workspace, name), 'utf8')).trim();
  if (!/^\d+(\s+\d+)*$/.test(text)) throw new Error(`${name} is not written yet`);
  return text.split(/\s+/).map(Number);
}

t.test('shell over HTTP JSON, SSE and MCP', async (t) => {
  const json = await svc.call('shell', { command: 'echo hello; echo oops >&2; pwd' });
  t.equal(json.status, 200);
  t.same(json.body, {
    success: true,
    metadata: {},
    answer: { stdout: `hello\n${svc.workspace}\n`, stderr: 'oops\n', exit_code: 0, stdout_truncated: false, stderr_truncated: false },
  });

  const sse = await svc.events('shell', { command: 'printf streamed' });
  t.equal(sse.status, 200);
  t.match(sse.events.at(-1), { kind: 'result', success: true, answer: { stdout: 'streamed', exit_code: 0 } });

  const mcp = await connectMcp(t, svc.url, svc.token);
  const good = await mcp.callTool({ name: 'shell', arguments: { command: 'echo via-mcp' } });
  t.match(good.structuredContent, { success: true, answer: { stdout: 'via-mcp\n', exit_code: 0 } });
  t.equal(good.isError, false);
  const bad = await mcp.callTool({ name: 'shell', arguments: { command: 'exit 4' } });
  t.match(bad.structuredContent, { success: false, answer: { exit_code: 4 } });
  t.equal(bad.isError, true);
});

t.test('nonzero exit and death by signal fail with the ShellOutput as answer', async (t) => {
  const exit = await svc.call('shell', { command: 'echo partial; echo bad >&2; exit 3' });
  t.same(exit.body, {
    success: false,
    metadata: {},
    answer: { stdout: 'partial\n', stderr: 'bad\n', exit_code: 3, stdout_truncated: false, stderr_truncated: false },
  });
  const killed = await svc.call('shell', { command: 'kill -KILL $$' });
  t.equal(killed.body.answer.exit_code, 128 + 9);
  t.equal(killed.body.success, false);
});

t.test('timeout kills the whole tree, including a setsid grandchild that ignores SIGTERM', async (t) => {
  // The grandchild leaves the process group and session (setsid), ignores SIGTERM (inherited by
  // exec), and records its pid and session id; the shell itself ignores SIGTERM too.
  const command = [
    "trap '' TERM",
    `setsid sh -c 'trap "" TERM; echo $$ $(cut -d" " -f6 /proc/$$/stat) > grandchild.pid; exec sleep 120' &`,
    'while [ ! -s grandchild.pid ]; do sleep 0.02; done',
    'echo started',
    'sleep 120',
  ].join('\n');
  const { status, body } = await svc.call('shell', { command, timeout: 1.5 });
  t.equal(status, 200);
  t.equal(body.success, false);
  const answer = body.answer;
  t.equal(answer.exit_code, null);
  t.equal(answer.stdout, 'started\n');
  t.match(answer.stderr, 'Command timed out after 1.5 seconds');
  const [pid, session] = await readPidFile(svc.workspace, 'grandchild.pid');
  t.equal(session, pid, 'the grandchild leads its own session');
  await waitFor(async () => !(await isAlive(pid!)), 5_000, 'the grandchild to be gone');
  t.pass('the setsid grandchild is gone');
});

t.test('timeout kills processes that detached and lost their parent: a setsid child of a subshell, a nohup launcher', async (t) => {
  // Neither is in the shell's process group nor below it in /proc by the time the timeout fires.
  const command = [
    'rm -f orphan-setsid.pid orphan-nohup.pid',
    '(setsid sleep 100 & echo $! > orphan-setsid.pid)',
    "setsid sh -c 'nohup sleep 100 >/dev/null 2>&1 & echo $! > orphan-nohup.pid'",
    'echo started',
    'sleep 120',
  ].join('\n');
  const { body } = await svc.call('shell', { command, timeout: 1 });
  t.match(body, { success: false, answer: { exit_code: null, stdout: 'started\n' } });
  const pids = [...(await readPidFile(svc.workspace, 'orphan-setsid.pid')), ...(await readPidFile(svc.workspace, 'orphan-nohup.pid'))];
  t.teardown(() => pids.forEach((pid) => { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }));
  t.equal(pids.length, 2);
  t.same(await Promise.all(pids.map((pid) => isAlive(pid))), [false, false], 'none of them survives the timeout');
});

t.test('after a normal exit the answer does not wait for a background process holding the pipe', async (t) => {
  const { body } = await svc.call('shell', { command: '(sleep 60 & echo $! > background.pid); echo done' });
  t.match(body, { success: true, answer: { stdout: 'done\n', exit_code: 0 } });
  const [pid] = await readPidFile(svc.workspace, 'background.pid');
  t.ok(await isAlive(pid!), 'the background process still holds the pipe, yet the answer came');
  process.kill(pid!, 'SIGKILL');
  await waitFor(async () => !(await isAlive(pid!)), 5_000, 'the background process to be gone');
});

t.test('each stream keeps exactly 1 MiB of a 5 MiB output', async (t) => {
  const command = "head -c 5242880 /dev/zero | tr '\\0' a; head -c 5242880 /dev/zero | tr '\\0' b >&2";
  const { body } = await svc.call('shell', { command, timeout: 60 });
  const answer = body.answer;
  t.equal(body.success, true);
  t.equal(answer.exit_code, 0);
  t.equal(answer.stdout.length, MiB);
  t.equal(answer.stderr.length, MiB);
  t.ok(/^a+$/.test(answer.stdout) && /^b+$/.test(answer.stderr), 'only the streams own bytes');
  t.equal(answer.stdout_truncated, true);
  t.equal(answer.stderr_truncated, true);
});

t.test('the cut never splits a multibyte character', async (t) => {
  // 'a' + 2-byte 'é's puts the 1 MiB boundary inside an 'é'; 'ab' + 4-byte emoji inside an emoji.
  const command = "printf a; yes 'é' | tr -d '\\n' | head -c 3000000; printf ab >&2; yes '😀' | tr -d '\\n' | head -c 3000000 >&2";
  const { body } = await svc.call('shell', { command, timeout: 60 });
  const answer = body.answer;
  t.equal(Buffer.byteLength(answer.stdout), MiB - 1);
  t.equal(Buffer.byteLength(answer.stderr), MiB - 2);
  t.notOk(answer.stdout.includes('\ufffd') || answer.stderr.includes('\ufffd'), 'no replacement characters');
  t.ok(answer.stdout.endsWith('é') && answer.stderr.endsWith('😀'));
  t.equal(answer.stdout_truncated, true);
  t.equal(answer.stderr_truncated, true);
});

t.test('argument rules: timeout bounds, required command, only the listed fields', async (t) => {
  for (const args of [{ command: 'true', timeout: 0 }, { command: 'true', timeout: 301 }, { command: 'true', extra: 1 }, {}, { command: '' }, { command: 'true', timeout: '5' }]) {
    const { status } = await svc.call('shell', args);
    t.equal(status, 422, JSON.stringify(args));
  }
  const max = await svc.call('shell', { command: 'true', timeout: 300 });
  t.equal(max.status, 200);
  t.equal(max.body.success, true);
});

t.test('closing the SSE stream kills the running command', async (t) => {
  const controller = new AbortController();
  // Not awaited: the stream's headers may only arrive with its first frame.
  const response = svc
    .fetch('/jobs/shell/events', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { command: 'sleep 120 & echo $! > running.pid; wait', timeout: 120 } }),
      signal: controller.signal,
    })
    .then(async (r) => {
      for await (const chunk of r.body ?? []) void chunk;
      return 'ended';
    })
    .catch((err: Error) => err.name);
  const [pid] = await waitFor(() => readPidFile(svc.workspace, 'running.pid').catch(() => undefined), 10_000, 'the command to start');
  t.ok(await isAlive(pid!), 'the command runs while the stream is open');
  controller.abort();
  t.equal(await response, 'AbortError');
  await waitFor(async () => !(await isAlive(pid!)), 10_000, 'the command to be killed after the disconnect');
  t.pass('the command was killed');
});

t.test('an MCP caller that disconnects kills its running command', async (t) => {
  const controller = new AbortController();
  const call = {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'shell', arguments: { command: 'sleep 302 & echo $! > mcp-running.pid; wait', timeout: 300 } },
  };
  const response = svc
    .fetch('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(call),
      signal: controller.signal,
    })
    .then(() => 'answered')
    .catch((err: Error) => err.name);
  const [pid] = await waitFor(() => readPidFile(svc.workspace, 'mcp-running.pid').catch(() => undefined), 10_000, 'the command to start');
  t.ok(await isAlive(pid!), 'the command runs while the MCP call is open');
  controller.abort();
  t.equal(await response, 'AbortError');
  await waitFor(async () => !(await isAlive(pid!)), 10_000, 'the command to be killed after the MCP caller left');
  t.pass('the command was killed');
});

t.test('parseSse sanity for shell events', async (t) => {
  // The result frame of a shell call is one line of JSON even when the output has newlines.
  const sse = await svc.events('shell', { command: 'printf "x\\ny\\n"' });
  t.equal(sse.raw.split('\n').filter((l) => l.startsWith('data: {"kind":"result"')).length, 1);
  t.equal(parseSse(sse.raw).filter((e) => e['kind'] === 'log').map((e) => e['content']).join(''), 'x\ny\n', 'the output was streamed too');
  t.same(parseSse(sse.raw).at(-1)?.['answer'], { stdout: 'x\ny\n', stderr: '', exit_code: 0, stdout_truncated: false, stderr_truncated: false });
});

// One extra service, started with TASKYARD_TOKEN in its environment, serves both tests below.
t.test('a service started with TASKYARD_TOKEN set: its shell commands do not see the token; stopping it kills running commands before the pool goes away', async (t) => {
  const workspace = await mkdtemp(join(tmpdir(), 'taskyard-shell-stop-'));
  t.teardown(() => rm(workspace, { recursive: true, force: true }));
  const before = process.env['TASKYARD_TOKEN'];
  process.env['TASKYARD_TOKEN'] = 'token-from-the-environment';
  const restore = () => {
    if (before === undefined) delete process.env['TASKYARD_TOKEN'];
    else process.env['TASKYARD_TOKEN'] = before;
  };
  t.teardown(restore);
  // No Task runs here: no runner kept warm, no GPU probe, no history sampler (each a process or a timer for nothing).
  const config = validateConfig({ service: { workspace, port: 0, runner_pool_size: 0, gpus: 0 }, machine: { history: { enabled: false } } }, 'test');
  const service = await startService({ config, token: 'stop-token' });
  const call = (args: Record<string, unknown>) =>
    fetch(`${service.url}/jobs/shell`, {
      method: 'POST',
      headers: { authorization: 'Bearer stop-token', 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: args }),
    });

  const hidden = (await (await call({ command: 'printf %s "${TASKYARD_TOKEN-unset}"; env | grep -c token-from-the-environment || true' })).json()) as { answer: ShellOutput };
  t.equal(hidden.answer.stdout, 'unset0\n', 'shell commands do not see the service token');
  restore();

  const pending = call({ command: "trap '' TERM; sleep 120 & echo $! > stop.pid; wait", timeout: 120 }).catch(() => undefined);
  const [pid] = await waitFor(() => readPidFile(workspace, 'stop.pid').catch(() => undefined), 10_000, 'the command to start');
  await service.close();
  t.notOk(await isAlive(pid!), 'the command is dead once close() resolved');
  await pending;
});
