import t from 'tap';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { TaskHandle, TaskStatus } from '../../schemas/tasks.js';

type Answer<T> = { answer: T; success: boolean; metadata: Record<string, unknown> };

/** The client's request timeout here: shorter than the Task, as the SDK's 60 s is shorter than a long one. */
const CLIENT_TIMEOUT_MS = 4_000;
/** await_task's bound in this test: under the client's timeout, as its default is under 60 s. */
const AWAIT_S = 2;
const TASK_S = 6;

/**
 * An agent as the hosts run them: the official SDK client with a request timeout shorter than the
 * Task, no progress token, no MCP Tasks; plain callTool('await_task') in a loop follows the Task to
 * its end (a plain wait_task would be cut at the timeout). The hosts' clients time out at the SDK's
 * default (60 s): await_task's default and largest bounds, as tools/list gives them, fit under it.
 */
t.test('a loop of plain await_task calls follows a Task longer than the client timeout to its end', async (t) => {
  const svc = await startTestService(t);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const { tools } = await mcp.listTools();
  const bound = (tools.find((x) => x.name === 'await_task')!.inputSchema.properties as Record<string, { default: number; maximum: number }>)['timeout']!;
  t.ok(bound.default * 1000 < DEFAULT_REQUEST_TIMEOUT_MSEC, `await_task's default bound (${bound.default} s) is under the SDK's default timeout`);
  t.ok(bound.maximum * 1000 < DEFAULT_REQUEST_TIMEOUT_MSEC, `await_task's largest bound (${bound.maximum} s) is under the SDK's default timeout`);

  const submitted = (await mcp.callTool({ name: 'submit', arguments: { task: 'sleep', seconds: TASK_S, steps: 3 } })) as CallToolResult;
  const handle = (submitted.structuredContent as Answer<TaskHandle>).answer;
  const started = Date.now();
  const answers: Array<Answer<TaskStatus>> = [];
  for (;;) {
    // Plain: no onprogress, so nothing resets the client's timeout.
    const args = { task_id: handle.task_id, run_id: handle.run_id, timeout: AWAIT_S };
    const result = (await mcp.callTool({ name: 'await_task', arguments: args }, undefined, { timeout: CLIENT_TIMEOUT_MS })) as CallToolResult;
    const answer = result.structuredContent as Answer<TaskStatus>;
    answers.push(answer);
    if (answer.metadata['done'] === true) {
      t.equal(result.isError, false, 'the finished run is a success');
      break;
    }
    t.equal(result.isError, false, 'a still-running answer is not an error');
    t.match(answer.answer.state, /^(queued|running)$/);
    if (answers.length > 20) throw new Error(`await_task never finished: ${JSON.stringify(answer)}`);
  }
  t.equal(answers.at(-1)!.answer.state, 'succeeded');
  t.ok(answers.length >= 2, `the loop took ${answers.length} calls over ${Math.round((Date.now() - started) / 1000)} s`);
});
