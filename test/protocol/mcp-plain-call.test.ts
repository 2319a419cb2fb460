import t from 'tap';
import { plainToolCall } from '../../protocol/mcp-plain-call.js';
import { startTestService, waitFor, type TestService } from '../helpers/service.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function post(svc: TestService, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await svc.fetch('/mcp', { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The same call twice: as a plain call (the fast path), and with a `_meta` key that sends it through the SDK's server. */
async function bothWays(svc: TestService, params: Record<string, unknown>) {
  const plain = await post(svc, { jsonrpc: '2.0', id: 7, method: 'tools/call', params });
  const viaSdk = await post(svc, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { ...params, _meta: { 'example.org/trace': 'x' } } });
  return { plain, viaSdk };
}

// One service for every test that needs no fresh one of its own (each uses names of its own).
const svc = await startTestService(t);

t.test('a plain tools/call answers exactly as the SDK server does: results, business failures, unknown tools, bad arguments', async (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['a result', { name: 'version', arguments: {} }],
    ['no arguments at all', { name: 'list_task_ids' }],
    ['a business failure', { name: 'status', arguments: { task_id: 'base#demo#nope' } }],
    ['an unknown tool', { name: 'no_such_tool', arguments: {} }],
    ['bad arguments', { name: 'wait_task', arguments: { task_id: 'x' } }],
  ];
  for (const [what, params] of cases) {
    const { plain, viaSdk } = await bothWays(svc, params);
    t.equal(plain.status, viaSdk.status, `${what}: same HTTP status`);
    t.same(plain.body, viaSdk.body, `${what}: same JSON-RPC answer`);
  }
  const failure = (await bothWays(svc, { name: 'status', arguments: { task_id: 'base#demo#nope' } })).plain.body['result'] as { isError: boolean };
  t.equal(failure.isError, true, 'a business failure is a tool error');
  const unknown = (await bothWays(svc, { name: 'no_such_tool' })).plain.body['error'] as { code: number; message: string };
  t.equal(unknown.code, -32602, 'an unknown tool is InvalidParams');
  const bad = (await bothWays(svc, { name: 'wait_task', arguments: { task_id: 'x' } })).plain.body['error'] as { message: string };
  t.match(bad.message, /arguments\.run_id/, 'bad arguments are named in MCP words');
});

t.test("a Task's status over a plain call: the text block is HTTP JSON's answer, asked again it stays the same, and it follows the Task", async (t) => {
  const submitted = await svc.fetch('/jobs/submit', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task: 'sleep', seconds: 1 } }) });
  const { task_id } = ((await submitted.json()) as { answer: { task_id: string } }).answer;
  const httpStatus = async () => (await svc.fetch('/jobs/status', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { task_id } }) })).text();
  type Result = { content: Array<{ text: string }>; structuredContent: { answer: { state: string } }; isError: boolean };
  const mcpStatus = async (id: number | string) => {
    const { body } = await post(svc, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'status', arguments: { task_id } } });
    return { id: body['id'], ...(body['result'] as Result) };
  };
  const { id, ...first } = await mcpStatus(1);
  t.equal(id, 1, 'the answer carries the call id');
  t.same(JSON.parse(first.content[0]!.text), first.structuredContent, 'the text block and the structured content hold the same JobResponse');
  t.not(first.structuredContent.answer.state, 'succeeded', 'the first answer is of the Task under way');
  const done = await waitFor(async () => {
    const { id: _, ...result } = await mcpStatus(3);
    return result.structuredContent.answer.state === 'succeeded' ? result : undefined;
  }, 20_000, 'the status to say succeeded');
  t.equal(done.content[0]!.text, await httpStatus(), "the text block is exactly HTTP JSON's answer, not an earlier status");
  t.equal(done.isError, false);
  t.same(await mcpStatus('again'), { id: 'again', ...done }, 'asked again (another id), the same result');
  const { viaSdk } = await bothWays(svc, { name: 'status', arguments: { task_id } });
  t.same(viaSdk.body, { jsonrpc: '2.0', id: 7, result: done }, "the SDK's server answers the same");
});

t.test('only the plain shape takes the short path', async (t) => {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'version', arguments: {} } };
  t.ok(plainToolCall(call), 'a plain call');
  t.ok(plainToolCall({ ...call, params: { ...call.params, _meta: {} } }), 'an empty _meta');
  t.notOk(plainToolCall([call]), 'a batch');
  t.notOk(plainToolCall({ ...call, params: { ...call.params, _meta: { progressToken: 1 } } }), 'a progress token');
  t.notOk(plainToolCall({ ...call, params: { ...call.params, task: { ttl: 1000 } } }), 'an MCP task');
  t.notOk(plainToolCall({ ...call, id: null }), 'a null id');
  t.notOk(plainToolCall({ ...call, id: 1.5 }), 'a fractional id');
  t.notOk(plainToolCall({ ...call, method: 'tools/list' }), 'another method');
  t.notOk(plainToolCall({ ...call, extra: 1 }), 'an unknown key');
  t.notOk(plainToolCall({ ...call, params: { name: 'version', arguments: [] } }), 'arguments that are not an object');
  t.notOk(plainToolCall({ ...call, jsonrpc: '1.0' }), 'another JSON-RPC version');
});
