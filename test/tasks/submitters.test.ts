import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startTestService, waitFor } from '../helpers/service.js';
import { makeWorkspace } from './task-helpers.js';

const AGENT = 'agent-token-0123456789abcdef';
const config = { service: { tokens: [{ name: 'agent', token: AGENT, jobs: ['submit'] }] } };

async function submitAs(url: string, token: string, taskName: string): Promise<{ task_id: string; run_id: string }> {
  const res = await fetch(`${url}/jobs/submit`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task: 'demo', x: 1, y: 2, task_name: taskName } }) });
  return ((await res.json()) as { answer: { task_id: string; run_id: string } }).answer;
}

t.test('who submitted a run survives a restart, follows a resubmit, and leaves with its Task', async (t) => {
  const workspace = await makeWorkspace(t);
  const file = join(workspace, '.taskyard', 'submitters.jsonl');
  const first = await startTestService(t, { workspace, config });
  const kept = await submitAs(first.url, AGENT, 'kept');
  const gone = await submitAs(first.url, AGENT, 'gone');
  const replaced = await submitAs(first.url, AGENT, 'replaced');
  for (const { task_id, run_id } of [kept, gone, replaced]) await first.call('wait_task', { task_id, run_id });
  // The service token submits `replaced` again: the new run is the service's.
  const again = (await first.call('submit', { task: 'demo', x: 1, y: 2, task_name: 'replaced' })).body.answer;
  await first.call('wait_task', { task_id: again.task_id, run_id: again.run_id });
  t.same((await first.call('delete_tasks', { task_ids: [gone.task_id] })).body.answer, [gone.task_id]);
  const by = async (svc: typeof first, id: string) => (await svc.call('status', { task_id: id })).body.metadata['submitted_by'];
  t.equal(await by(first, replaced.task_id), 'service', 'a new run is its own submitter\'s');
  await waitFor(async () => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').length === 4, 10_000, 'four submits kept');
  await first.close();

  const second = await startTestService(t, { workspace, config });
  t.equal(await by(second, kept.task_id), 'agent', 'known after a restart');
  t.equal(await by(second, replaced.task_id), 'service');
  const page = await second.call('query_task_statuses', {});
  t.same(page.body.metadata, { submitted_by: { [kept.task_id]: 'agent', [replaced.task_id]: 'service' } });
  const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { task_id: string; run_id: string; token: string });
  t.same(lines.map((l) => `${l.task_id} ${l.token}`).sort(), [`${kept.task_id} agent`, `${replaced.task_id} service`].sort(), 'the file keeps only the runs still there');
});
