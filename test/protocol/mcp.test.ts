// Runs on every HTTP front end.
import { request } from 'node:http';
import t from 'tap';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { testJobs } from '../helpers/test-jobs.js';
import type { JobCatalog } from '../../schemas/job-response.js';

const capabilities = [...DEFAULT_CAPABILITIES, testJobs];

const rpc = (method: string, params: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

// One service for these tests: none needs a fresh one.
const svc = await startTestService(t, { capabilities });

t.test('tools/list mirrors the catalog', async (t) => {
  const catalog = ((await (await svc.fetch('/jobs')).json()) as { answer: JobCatalog }).answer;
  const mcp = await connectMcp(t, svc.url, svc.token);
  const { tools } = await mcp.listTools();
  t.same(
    tools.map((x) => ({ name: x.name, description: x.description, input: x.inputSchema })),
    catalog.items.map((i) => ({ name: i.name, description: i.description, input: i.input_schema })),
  );
  // The catalog's output_schema is the shared JobResponse; a tool's outputSchema is that same
  // JobResponse with `answer` narrowed to the Job's answer schema or a failure's error text.
  type Shape = { properties: Record<string, unknown>; required: string[] };
  for (const tool of tools) {
    const shared = catalog.items.find((i) => i.name === tool.name)!.output_schema as Shape;
    const output = tool.outputSchema as Shape;
    t.same({ ...output.properties, answer: null }, { ...shared.properties, answer: null }, `${tool.name}: success and metadata as in the JobResponse`);
    t.same(output.required, shared.required, `${tool.name}: the JobResponse's required fields`);
    t.match(output.properties['answer'], { anyOf: [{}, { type: 'string' }] }, `${tool.name}: answer is its answer schema or error text`);
  }
});

t.test('tools/call answers the JobResponse as structured content and text', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const okResult = await mcp.callTool({ name: 'echo', arguments: { text: 'hi' } });
  const expected = { answer: { text: 'hi', times: 1 }, success: true, metadata: {} };
  t.same(okResult.structuredContent, expected);
  t.same(JSON.parse((okResult.content as Array<{ text: string }>)[0]!.text), expected);
  t.equal(okResult.isError, false);

  const failure = await mcp.callTool({ name: 'explode', arguments: {} });
  t.equal(failure.isError, true);
  t.same(failure.structuredContent, { answer: "KeyError: 'missing-thing'", success: false, metadata: {} });

  const invalid = await mcp.callTool({ name: 'echo', arguments: { text: 5 } }).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(invalid instanceof McpError && invalid.code === ErrorCode.InvalidParams, 'invalid arguments are InvalidParams');
  t.match((invalid as Error).message, /text/);
  await t.rejects(mcp.callTool({ name: 'nope', arguments: {} }), /Unknown tool/);
  // The client puts `MCP error <code>: ` in front of the message it gets: the server's message must
  // not carry it already, on the short path (above) nor through the SDK's server (a progress token).
  const viaSdk = await mcp.callTool({ name: 'echo', arguments: { text: 5 } }, undefined, { onprogress: () => {} }).then(
    () => null,
    (err: unknown) => err,
  );
  for (const [path, err] of [['plain call', invalid], ['SDK server', viaSdk]] as const) {
    t.equal((err as Error).message.match(/MCP error/g)?.length, 1, `${path}: "MCP error -32602" appears once: ${(err as Error).message}`);
  }
});

t.test('/mcp/ works too; GET is 405; the bearer rule applies', async (t) => {
  const slash = await svc.fetch('/mcp/', { method: 'POST', headers: MCP_HEADERS, body: rpc('tools/list') });
  t.equal(slash.status, 200);
  t.ok(((await slash.json()) as { result: { tools: unknown[] } }).result.tools.length > 0);
  const get = await svc.fetch('/mcp', { headers: { accept: 'text/event-stream' } });
  t.equal(get.status, 405);
  await get.arrayBuffer();
  const anon = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: rpc('tools/list') });
  t.equal(anon.status, 401);
  t.same(await anon.json(), { detail: 'Invalid bearer token' });
  const garbage = await svc.fetch('/mcp', { method: 'POST', headers: MCP_HEADERS, body: '{nope' });
  t.equal(garbage.status, 400);
  t.match(await garbage.json(), { error: { code: ErrorCode.ParseError } });
});

t.test('DNS rebinding: foreign Origin or Host is 403, loopback ones pass', async (t) => {
  const port = new URL(svc.url).port;
  // node:http, not fetch: fetch does not let a caller set the Host header.
  const tryWith = (headers: Record<string, string>) =>
    new Promise<number | undefined>((resolve, reject) => {
      const body = rpc('tools/list');
      const req = request(new URL('/mcp', svc.url), { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${svc.token}`, 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end(body);
    });
  t.equal(await tryWith({ origin: 'http://evil.example.com' }), 403);
  t.equal(await tryWith({ host: 'evil.example.com' }), 403);
  t.equal(await tryWith({ origin: `http://localhost:${port}` }), 200);
  t.equal(await tryWith({ origin: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}` }), 200);
  t.equal(await tryWith({ host: `localhost:${port}` }), 200);
});
