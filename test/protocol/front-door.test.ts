// Runs on every HTTP front end.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';

t.test('version over JSON, SSE and MCP', async (t) => {
  const svc = await startTestService(t);
  const json = await svc.call('version');
  t.equal(json.status, 200);
  t.equal(json.body.success, true);
  t.equal(typeof json.body.answer, 'string');
  t.equal(json.body.metadata['version'], json.body.answer);

  const sse = await svc.events('version');
  t.equal(sse.status, 200);
  t.same(sse.events.at(-1), { kind: 'result', ...json.body });

  const mcp = await connectMcp(t, svc.url, svc.token);
  const result = await mcp.callTool({ name: 'version', arguments: {} });
  t.same(result.structuredContent, json.body);
  t.equal(result.isError, false);
});
