// Runs on every HTTP front end.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import t from 'tap';
import { makeWorkspace, startTaskService, statusOf, submitOk, waitTask, writeFixturePlugin } from './task-helpers.js';

setFlagsFromString('--expose-gc');
/** A full collection: what the heap holds after it is what something keeps, not garbage waiting. */
const gc = runInNewContext('gc') as () => void;

const MIB = 1024 * 1024;
/** Log written while the follower is not reading: far more than the growth the test allows. */
const LOG_MIB = 128;
const ALLOWED_GROWTH_MIB = 32;

const BIG_LOG = `
import { existsSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { defineTask } from 'taskyard/task';

export default [
  defineTask({
    name: 'big-log',
    taskType: 'fixture',
    description: 'Writes a ready line, waits for a file named go in its directory, then writes mib MiB to its log.',
    input: { type: 'object', properties: { mib: { type: 'integer' } }, required: ['mib'] },
    output: { type: 'object', properties: {} },
    async run(input) {
      process.stdout.write('ready\\n');
      for (let i = 0; i < 3000 && !existsSync('go'); i++) await delay(20);
      const line = 'y'.repeat(1023) + '\\n';
      const mib = line.repeat(1024);
      for (let i = 0; i < input.mib; i++) process.stdout.write(mib);
      return {};
    },
  }),
];
`;

/** Heap and external (Buffer) bytes held after a full collection. */
function heldBytes(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

t.test('a follower far behind a big log holds a window or two, not the log', async (t) => {
  const workspace = await makeWorkspace(t);
  await writeFixturePlugin(workspace, { name: 'taskyard-big-log', tasks: BIG_LOG });
  const svc = await startTaskService(t, { workspace });
  const handle = await submitOk(t, svc, { task: 'big-log', mib: LOG_MIB });
  const res = await svc.fetch('/jobs/stream_task/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id: handle.task_id } }) });
  const reader = res.body!.getReader();
  // Read up to the ready line: the follower then stands at the log's start, and stops reading.
  let head = '';
  while (!head.includes('ready')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended early: ${head}`);
    head += Buffer.from(value).toString();
  }
  const dir = dirname((await statusOf(svc, handle.task_id)).log_path);
  await writeFile(join(workspace, dir, 'go'), '');
  t.equal((await waitTask(svc, handle)).status.state, 'succeeded', 'the Task wrote its log and ended while the follower read nothing');

  const before = heldBytes();
  let peak = before;
  let received = 0;
  let tail = '';
  for (let n = 0; ; n++) {
    const { value, done } = await reader.read();
    if (done) break;
    received += value.byteLength;
    tail = (tail + Buffer.from(value).toString()).slice(-4096);
    if (n % 64 === 0) peak = Math.max(peak, heldBytes());
  }
  const growth = (peak - before) / MIB;
  t.ok(received > LOG_MIB * MIB, `the follower got the whole log (${(received / MIB).toFixed(1)} MiB of frames)`);
  t.match(tail, /event: result\ndata: \{"kind":"result"[^\n]*"state":"succeeded"/, 'and then the terminal status');
  t.ok(growth < ALLOWED_GROWTH_MIB, `memory held while it read ${LOG_MIB} MiB grew by ${growth.toFixed(1)} MiB (allowed ${ALLOWED_GROWTH_MIB})`);
});
