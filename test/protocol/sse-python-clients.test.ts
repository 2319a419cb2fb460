// Runs on every HTTP front end.
// Python's `requests` (urllib3 reading chunk by chunk, lines through iter_lines) and `httpx`
// (h11) follow a Task over SSE. The Task waits for the client to acknowledge each event before
// it writes the next one, so an event held back until the next write (uWS once sent the CRLF
// closing a chunk only in front of the next chunk) stalls the exchange and fails the Task: the
// test detects lateness without any timing bound. Round trips are printed for the record.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { TestService } from '../helpers/service.js';
import { ensureDebianPackages, runCommand } from '../helpers/debian-packages.js';
import { makeWorkspace, startTaskService, submitOk, waitTask, writeFixturePlugin } from '../tasks/task-helpers.js';

/** Debian's interpreter: the `python3` on PATH may be another one, without Debian's packages. */
const PYTHON = '/usr/bin/python3';
const STEPS = 5;

const HANDSHAKE_TASKS = `
import { existsSync, watch } from 'node:fs';
import { join } from 'node:path';
import { defineTask, TaskError } from 'taskyard/task';

/** Resolves once the file exists in dir (woken by the directory's changes, not by polling). */
function created(dir, name) {
  return new Promise((resolve, reject) => {
    const finish = (err) => {
      watcher.close();
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const watcher = watch(dir, () => existsSync(join(dir, name)) && finish());
    const timer = setTimeout(() => finish(new TaskError('TimeoutError', 'event ' + name + ' was not acknowledged: it did not reach the client')), 15000);
    if (existsSync(join(dir, name))) finish();
  });
}

export default [
  defineTask({
    name: 'handshake',
    taskType: 'fixture',
    description: 'Per step: reports progress and waits for its ack file, then logs a line and waits for that ack.',
    input: { type: 'object', properties: { steps: { type: 'integer' }, acks: { type: 'string' } }, required: ['steps', 'acks'] },
    output: { type: 'object', properties: { progress_ms: { type: 'array' }, log_ms: { type: 'array' } } },
    async run(input, ctx) {
      const trips = { p: [], l: [] };
      const acked = async (name) => {
        const start = Date.now();
        await created(input.acks, name);
        trips[name[0]].push(Date.now() - start);
      };
      await ctx.step('handshake', async () => {
        for (let i = 1; i <= input.steps; i++) {
          ctx.progress((i * 100) / input.steps);
          await acked('p' + i);
          ctx.logger.info('line ' + i);
          await acked('l' + i);
        }
      });
      return { progress_ms: trips.p, log_ms: trips.l };
    },
  }),
];
`;

/** Follows with `requests` or `httpx`, acknowledging each progress and log event by creating a file. */
const CLIENT = `
import json, os, re, sys
client, url, token, task_id, acks, steps = sys.argv[1:7]
steps = int(steps)
headers = {'authorization': 'Bearer ' + token, 'content-type': 'application/json'}
body = json.dumps({'arguments': {'task_id': task_id, 'poll_interval': 30}})

def lines():
    if client == 'requests':
        import requests
        with requests.post(url, data=body, headers=headers, stream=True, timeout=(5, 30)) as r:
            r.raise_for_status()
            yield from r.iter_lines(decode_unicode=True)
    else:
        import httpx
        with httpx.stream('POST', url, content=body, headers=headers, timeout=httpx.Timeout(30, connect=5)) as r:
            r.raise_for_status()
            yield from r.iter_lines()

def ack(name):
    open(os.path.join(acks, name), 'w').close()

kind, counts = None, {'progress': 0, 'log': 0}
for line in lines():
    line = line.rstrip('\\r\\n')  # httpx 0.23 keeps line endings
    if line.startswith('event: '):
        kind = line[7:]
    elif line.startswith('data: '):
        data = json.loads(line[6:])
        if data['kind'] != kind:
            sys.exit('event line %s differs from data kind %s' % (kind, data['kind']))
        if kind in counts:
            counts[kind] += 1
        if kind == 'progress' and data['name'] == 'handshake' and data['percentage'] is not None:
            ack('p%d' % round(data['percentage'] * steps / 100))
        elif kind == 'log':
            for m in re.finditer(r'line (\\d+)', data['content']):
                ack('l' + m.group(1))
        elif kind == 'result':
            print(json.dumps({'success': data['success'], 'state': data['answer']['state'], 'counts': counts}))
            sys.exit(0)
sys.exit('the stream ended without a result')
`;

/** Runs the Python client to completion (bounded): its exit code, stdout and stderr. */
function follow(client: string, url: string, token: string, taskId: string, acks: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, ['-c', CLIENT, client, url, token, taskId, acks, String(STEPS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const clientsPresent = async () => (await runCommand(PYTHON, ['-c', 'import requests, httpx'])).code === 0;
const missing = await ensureDebianPackages(['python3-requests', 'python3-httpx'], clientsPresent).then(
  () => null,
  (err: Error) => err.message,
);

/** One service for both clients (each follows a Task of its own); none when the clients are missing. */
async function handshakeService(): Promise<TestService> {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-handshake', tasks: HANDSHAKE_TASKS });
  return startTaskService(t, { workspace });
}
const shared = missing ? null : await handshakeService();

for (const client of ['requests', 'httpx']) {
  t.test(`Python ${client} receives every SSE event before the next one is written`, { skip: missing ?? false }, async (t) => {
    const svc = shared!;
    const acks = await mkdtemp(join(tmpdir(), 'taskyard-acks-'));
    t.teardown(() => rm(acks, { recursive: true, force: true }));
    const handle = await submitOk(t, svc, { task: 'handshake', steps: STEPS, acks });
    const run = await follow(client, `${svc.url}/jobs/stream_task/events`, svc.token!, handle.task_id, acks);
    t.equal(run.code, 0, `the ${client} client read the stream to its result: ${run.err}`);
    const done = await waitTask(svc, handle);
    t.equal(done.status.state, 'succeeded', `every event was acknowledged before the next was written: ${done.status.error}`);
    if (run.code === 0) {
      const report = JSON.parse(run.out) as { success: boolean; state: string; counts: { progress: number; log: number } };
      t.same([report.success, report.state], [true, 'succeeded'], 'the result carries the terminal status');
      t.ok(report.counts.log >= STEPS, `a log event per line (${report.counts.log})`);
    }
    // Progress round trips include the runner's coalescing of progress writes (up to 100 ms).
    const trips = ((done.status as Record<string, unknown>)['result'] ?? {}) as { progress_ms?: number[]; log_ms?: number[] };
    t.comment(`${client} on ${svc.adapter}: log line → acknowledged (ms): ${trips.log_ms?.join(' ')}; progress: ${trips.progress_ms?.join(' ')}`);
  });
}
