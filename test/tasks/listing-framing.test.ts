// Runs on every HTTP front end.
import t from 'tap';
import { writeDemoRecords } from '../../bench/lib/task-records.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { FAST, StrictConnection, type ReadPace } from '../helpers/strict-http-client.js';
import { makeWorkspace, submitOk, waitTask } from './task-helpers.js';

/**
 * Multi-megabyte `list_task_statuses` listings read by a strict client (every framing byte
 * checked, test/helpers/strict-http-client.ts), by a fast reader and a slow jittery one on
 * keep-alive connections, while `status` is polled on a third and a Task runs. Guards the
 * listing path end to end: the 48 KB chunk builder, the front ends' streamed writes under
 * backpressure (test/protocol/stream-framing.test.ts has the adapter-level fuzz). Longer runs:
 * LISTING_STRESS_RECORDS and LISTING_STRESS_MS.
 */

const RECORDS = Number(process.env['LISTING_STRESS_RECORDS'] ?? 6000);
const STRESS_MS = Number(process.env['LISTING_STRESS_MS'] ?? 0);
const LISTINGS = 3;

function jittery(): ReadPace {
  let n = 0;
  return { pauseMs: () => (++n % 3 === 0 ? 1 + (n % 5) : 0) };
}

function call(conn: StrictConnection, svc: TestService, name: string, args: Record<string, unknown>) {
  return conn.request('POST', `/jobs/${name}`, { authorization: `Bearer ${svc.token}`, 'content-type': 'application/json' }, JSON.stringify({ arguments: args }));
}

/** Lists until `more()` says stop (at least LISTINGS times), checking each answer is whole JSON. */
async function lister(svc: TestService, pace: ReadPace, expected: number, more: () => boolean): Promise<number> {
  const conn = await StrictConnection.open(svc.port, pace);
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

t.test('multi-megabyte listings arrive framed exactly while status is polled and a Task runs', async (t) => {
  if (STRESS_MS > 0) t.setTimeout(STRESS_MS + 120_000);
  const workspace = await makeWorkspace(t);
  writeDemoRecords(workspace, RECORDS);
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
    const counts = await Promise.all([lister(svc, FAST, RECORDS + 1, more), lister(svc, jittery(), RECORDS + 1, more)]);
    t.pass(`${counts[0]} fast and ${counts[1]} slow listings of ${RECORDS + 1} statuses`);
  } finally {
    listing = false;
  }
  t.ok((await poller) > 0, 'status answered throughout');
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded', 'the Task ran to its end meanwhile');
});
