import t from 'tap';
import { CallToolResultSchema, CreateTaskResultSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/wait-for.js';
import { RetainedResults } from '../../protocol/retained-results.js';
import { SHELL_RESULT_LIMITS } from '../../protocol/mcp-shell-tasks.js';

const MIB = 1024 * 1024;

t.test('retained results: bounded in count and bytes, oldest first; the ids gone are remembered, boundedly', async (t) => {
  const forgotten: string[] = [];
  const kept = new RetainedResults({ count: 3, bytes: 100, remembered: 4 }, (id) => forgotten.push(id));
  for (const id of ['a', 'b', 'c']) kept.keep(id, 10, 60_000);
  t.same(forgotten, [], 'within both bounds nothing goes');
  kept.keep('d', 10, 60_000);
  t.same(forgotten, ['a'], 'past the count the oldest goes');
  kept.keep('e', 75, 60_000);
  t.same(forgotten, ['a', 'b'], 'past the bytes (10+10+10+75) the oldest goes until it fits');
  t.equal(kept.bytes, 95);
  kept.keep('f', 100, 60_000);
  t.same(forgotten, ['a', 'b', 'c', 'd', 'e'], 'a big one pushes out all before it');
  t.equal(kept.bytes, 100);
  t.equal(kept.gone('a'), undefined, 'only the last `remembered` ids are remembered');
  t.same(['b', 'c', 'd', 'e'].map((id) => kept.gone(id)), ['dropped', 'dropped', 'dropped', 'dropped']);
  t.equal(kept.gone('f'), undefined, 'a kept one is not gone');

  const expiring = new RetainedResults({ count: 10, bytes: 100, remembered: 10 }, (id) => forgotten.push(id));
  expiring.keep('x', 1, 30);
  await waitFor(() => expiring.gone('x'), 5000, 'the ttl to pass');
  t.equal(expiring.gone('x'), 'expired');
  t.equal(expiring.bytes, 0);
  kept.keep('z', 1000, 1);
  await waitFor(() => kept.bytes === 0, 5000, 'the last timers to settle');
});

/**
 * Starts a task-augmented shell call and answers its task once the command finished (tasks/get
 * says completed), without fetching its result: the results are what the service must bound.
 */
async function shellTask(mcp: Awaited<ReturnType<typeof connectMcp>>, command: string): Promise<Task> {
  const { task } = await mcp.request({ method: 'tools/call', params: { name: 'shell', arguments: { command }, task: { ttl: 3_600_000 } } }, CreateTaskResultSchema);
  await waitFor(async () => (await mcp.experimental.tasks.getTask(task.taskId)).status === 'completed', 30_000, `shell task ${task.taskId} to complete`);
  return task;
}

t.test('finished shell MCP tasks are kept within a total size: the oldest is dropped, and fetching it says so', async (t) => {
  const svc = await startTestService(t);
  const mcp = await connectMcp(t, svc.url, svc.token);
  // 1 MiB of stdout and 1 MiB of stderr each (the most a command keeps), of NUL bytes: the service
  // counts a result by its JSON, where each is 6 bytes (\u0000), so a few commands pass the bound.
  const big = `head -c ${MIB} /dev/zero; head -c ${MIB} /dev/zero >&2`;
  const count = Math.ceil(SHELL_RESULT_LIMITS.bytes / (2 * 6 * MIB)) + 1;
  const first = await shellTask(mcp, big);
  const rest: Task[] = [];
  for (let i = 1; i < count; i++) rest.push(await shellTask(mcp, big));

  const dropped = /^MCP error -32602: Task dropped: taskyard-shell:\S+ finished, and its result was dropped to bound the service's memory: it keeps the results of at most \d+ finished shell commands, 32 MiB in all/;
  await t.rejects(mcp.experimental.tasks.getTaskResult(first.taskId, CallToolResultSchema), dropped, 'tasks/result of the oldest');
  await t.rejects(mcp.experimental.tasks.getTask(first.taskId), dropped, 'tasks/get of the oldest');
  const last = await mcp.experimental.tasks.getTaskResult(rest.at(-1)!.taskId, CallToolResultSchema);
  t.equal((last.structuredContent as { answer: { stdout: string } }).answer.stdout, '\0'.repeat(MIB), 'the newest is whole');
  const listed = (await mcp.experimental.tasks.listTasks()).tasks.filter((x) => x.taskId.startsWith('taskyard-shell:'));
  t.ok(listed.length < count, `tasks/list holds fewer than all (${listed.length} of ${count})`);
  await t.rejects(mcp.experimental.tasks.getTask('taskyard-shell:never'), /Task not found: taskyard-shell:never/, 'an unknown id is still not found');
});
