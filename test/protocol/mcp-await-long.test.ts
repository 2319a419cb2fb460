import t from 'tap';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { TaskHandle, TaskStatus } from '../../schemas/tasks.js';

type Answer<T> = { answer: T; success: boolean; metadata: Record<string, unknown> };

/**
 * An agent as the hosts run them: the official SDK client with its default 60 s request timeout,
 * no progress token, no MCP Tasks; plain callTool('await_task') in a loop follows a 90 s Task to
 * its end (a plain wait_task would be cut at 60 s). Slow by nature: the one test of its kind.
 */
t.test('a loop of plain await_task calls follows a 90 s Task to its end under the default 60 s timeout', async (t) => {
  const svc = await startTestService(t);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const submitted = (await mcp.callTool({ name: 'submit', arguments: { task: 'sleep', seconds: 90, steps: 9 } })) as CallToolResult;
  const handle = (submitted.structuredContent as Answer<TaskHandle>).answer;
  const started = Date.now();
  const answers: Array<Answer<TaskStatus>> = [];
  for (;;) {
    // Plain: no timeout option, no onprogress; the SDK's DEFAULT_REQUEST_TIMEOUT_MSEC (60 s) applies.
    const result = (await mcp.callTool({ name: 'await_task', arguments: { task_id: handle.task_id, run_id: handle.run_id } })) as CallToolResult;
    const answer = result.structuredContent as Answer<TaskStatus>;
    answers.push(answer);
    if (answer.metadata['done'] === true) {
      t.equal(result.isError, false, 'the finished run is a success');
      break;
    }
    t.equal(result.isError, false, 'a still-running answer is not an error');
    t.match(answer.answer.state, /^(queued|running)$/);
    if (answers.length > 10) throw new Error(`await_task never finished: ${JSON.stringify(answer)}`);
  }
  t.equal(answers.at(-1)!.answer.state, 'succeeded');
  t.ok(answers.length >= 2, `the loop took ${answers.length} calls over ${Math.round((Date.now() - started) / 1000)} s`);
});
