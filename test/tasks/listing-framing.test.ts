// Runs on every HTTP front end.
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.js';
import { strictClientProcess, type StrictRequest } from '../helpers/strict-client-process.js';
import { StrictConnection, type ReadPace } from '../helpers/strict-http-client.js';
import { makeWorkspace, submitOk, waitTask } from './task-helpers.js';

/**
 * Multi-megabyte `list_task_statuses` listings read by a strict client (every framing byte
 * checked, test/helpers/strict-http-client.ts), by a fast reader and a slow jittery one on
 * keep-alive connections, while `status` is polled on a third and a Task runs. Guards the
 * listing path end to end: the 48 KB chunk builder, the front ends' streamed writes under
 * backpressure (test/protocol/stream-framing.test.ts has the adapter-level fuzz). Longer runs:
 * LISTING_STRESS_RECORDS and LISTING_STRESS_MS.
 */

const RECORDS = Number(process.env['LISTING_STRESS_RECORDS'] ?? 1500);
/** Bytes of text in each record's config: few records (files are slow to write), megabytes of listing. */
const NOTE = 'n'.repeat(2500);

/** Finished records written straight to the workspace: status.json only, each about 3 KB. */
function writeRecords(workspace: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const id = `base#demo#big-${String(i).padStart(6, '0')}`;
    const dir = join(workspace, 'base', id);
    mkdirSync(dir, { recursive: true });
    const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    const status = {
      task_id: id, run_id: `run${i}`, task_type: 'base', task_name: 'demo', config: { x: i, y: 1, note: NOTE, task_name: `big-${i}`, source_tasks: '' }, state: 'succeeded',
      pid: null, created_at: at, started_at: at, finished_at: at, steps: [], result: { result: i + 1 }, error: '', exit_code: 0, log_path: '',
    };
    writeFileSync(join(dir, 'status.json'), JSON.stringify(status));
  }
}
const STRESS_MS = Number(process.env['LISTING_STRESS_MS'] ?? 0);
const LISTINGS = 3;

function jittery(): ReadPace {
  let n = 0;
  return { pauseMs: () => (++n % 3 === 0 ? 1 + (n % 5) : 0) };
}

function request(svc: TestService, name: string, args: Record<string, unknown>): StrictRequest {
  return { method: 'POST', path: `/jobs/${name}`, headers: { authorization: `Bearer ${svc.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) };
}

function call(conn: StrictConnection, svc: TestService, name: string, args: Record<string, unknown>) {
  const r = request(svc, name, args);
  return conn.request(r.method, r.path, r.headers, r.body);
}

/** Lists in this process, slowly, until `more()` says stop (at least LISTINGS times), checking each answer is whole JSON. */
async function slowLister(svc: TestService, expected: number, more: () => boolean): Promise<number> {
  const conn = await StrictConnection.open(svc.port, jittery());
  try {
    let listings = 0;
    while (listings < LISTINGS || more()) {
      const answer = await call(conn, svc, 'list_task_statuses', {});
      const body = JSON.parse(answer.body.toString('utf8')) as { success: boolean; answer: unknown[] };
      if (answer.status !== 200 || !body.success) throw new Error(`listing ${listings}: ${answer.status}`);
      if (body.answer.length !== expected) throw new Error(`listing ${listings}: ${body.answer.length} statuses, expected ${expected}`);
      listings++;
    }
    return listings;
  } finally {
    conn.close();
  }
}

/** Lists from a process of its own as fast as it reads (how the defect was first seen). */
async function fastLister(svc: TestService, expected: number): Promise<number> {
  const reports = await strictClientProcess({ port: svc.port, pace: 'fast', requests: [request(svc, 'list_task_statuses', {})], forMs: STRESS_MS, times: LISTINGS });
  for (const [i, report] of reports.entries()) {
    if (report.status !== 200 || report.answers !== expected) throw new Error(`listing ${i}: status ${report.status}, ${String(report.answers)} statuses, expected ${expected}`);
  }
  return reports.length;
}

t.test('multi-megabyte listings arrive framed exactly while status is polled and a Task runs', async (t) => {
  if (STRESS_MS > 0) t.setTimeout(STRESS_MS + 120_000);
  const workspace = await makeWorkspace(t);
  writeRecords(workspace, RECORDS);
  const svc = await startTestService(t, { workspace });
  const handle = await submitOk(t, svc, { task: 'sleep', seconds: 2, steps: 10, task_name: 'while-listing' });
  const deadline = Date.now() + STRESS_MS;
  let listing = true;
  const more = () => Date.now() < deadline;
  const poller = (async () => {
    const conn = await StrictConnection.open(svc.port);
    try {
      let polls = 0;
      while (listing) {
        const answer = await call(conn, svc, 'status', { task_id: handle.task_id });
        const body = JSON.parse(answer.body.toString('utf8')) as { success: boolean };
        if (!body.success) throw new Error(`status failed: ${answer.body.toString('utf8')}`);
        polls++;
      }
      return polls;
    } finally {
      conn.close();
    }
  })();
  try {
    const counts = await Promise.all([fastLister(svc, RECORDS + 1), slowLister(svc, RECORDS + 1, more)]);
    t.pass(`${counts[0]} fast and ${counts[1]} slow listings of ${RECORDS + 1} statuses`);
  } finally {
    listing = false;
  }
  t.ok((await poller) > 0, 'status answered throughout');
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded', 'the Task ran to its end meanwhile');
});
