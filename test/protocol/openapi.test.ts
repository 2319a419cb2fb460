import { Validator } from '@seriousme/openapi-schema-validator';
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';

interface Operation {
  requestBody?: { content: Record<string, { schema: { properties: { arguments: Record<string, unknown> } } }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
}
interface AnswerSchema {
  schema: { properties: { answer: unknown } };
}
/** A type alias (not an interface), so the document passes as the validator's plain object. */
type OpenApi = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  security?: unknown;
  components: { securitySchemes: Record<string, unknown> };
};

t.test('GET /openapi.json: a valid OpenAPI 3.1 document built from the Job registry', async (t) => {
  const svc = await startTestService(t, { config: { jobs: { version: { enable_stream: false }, shell: { enable_serve: false } } } });
  const res = await svc.fetch('/openapi.json');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /application\/json/);
  const doc = (await res.json()) as OpenApi;
  const result = await new Validator().validate(doc);
  t.same(result.errors, undefined, 'no validation errors');
  t.ok(result.valid, 'valid against the OpenAPI 3.1 schema');
  t.equal(doc.openapi, '3.1.0');

  const { tools } = await (await connectMcp(t, svc.url, svc.token)).listTools();
  const outputSchemas = new Map(tools.map((x) => [x.name, x.outputSchema]));
  const catalog = (await (await svc.fetch('/jobs')).json()) as { answer: { items: Array<{ name: string; input_schema: Record<string, unknown> }> } };
  for (const item of catalog.answer.items) {
    const post = doc.paths[`/jobs/${item.name}`]?.['post'];
    t.ok(post, `${item.name} has its JSON route`);
    t.same(post?.requestBody?.content['application/json']?.schema.properties.arguments, { ...item.input_schema, default: {} }, `${item.name}: the catalog's input schema`);
    const answered = post?.responses['200']?.content?.['application/json'] as { schema: unknown } | undefined;
    // A task-augmented submit's result is its run's TaskStatus: submit's tool also allows that answer.
    if (item.name !== 'submit') t.same(answered?.schema, outputSchemas.get(item.name), `${item.name}: answers its JobResponse, the MCP tool's outputSchema`);
  }
  const answerOf = (name: string) => (doc.paths[`/jobs/${name}`]!['post']!.responses['200']!.content!['application/json'] as AnswerSchema).schema.properties.answer;
  t.match(answerOf('machine_status'), { anyOf: [{ properties: { axonx: {}, cpu: {}, memory: {}, gpus: {} } }, { type: 'string' }] }, 'machine_status answers MachineInfo (or error text)');
  t.match(answerOf('submit'), { anyOf: [{ required: ['task_id', 'run_id', 'task'] }, { type: 'string' }] }, 'submit answers a TaskHandle');
  t.match(outputSchemas.get('submit'), { properties: { answer: { anyOf: [{ anyOf: [{ required: ['task_id', 'run_id', 'task'] }, { properties: { state: {}, exit_code: {} } }] }, { type: 'string' }] } } }, "submit's tool: a TaskHandle, or (as an MCP task) the run's TaskStatus");
  t.match(answerOf('list_task_statuses'), { anyOf: [{ type: 'array', items: { properties: { state: {}, exit_code: {} } } }, {}] }, 'list_task_statuses answers TaskStatus items');
  t.notOk(doc.paths['/jobs/shell'], 'a Job not served is absent');
  t.ok(doc.paths['/jobs/version'], 'version is served');
  t.notOk(doc.paths['/jobs/version/events'], 'its /events route is disabled, so absent');
  t.ok(doc.paths['/jobs/stream_task/events']?.['post']?.responses['200']?.content?.['text/event-stream'], '/events routes are text/event-stream');
  for (const path of ['/files', '/health', '/metrics', '/jobs']) t.ok(doc.paths[path], `${path} is described`);
  t.same(Object.keys(doc.paths['/files']!).sort(), ['delete', 'get', 'post']);
  t.same(doc.components.securitySchemes['bearer'], { type: 'http', scheme: 'bearer', description: 'The service token' });
  t.same(doc.security, [{ bearer: [] }]);

  t.equal((await fetch(`${svc.url}/openapi.json`)).status, 401, 'the bearer rule of /jobs applies');
  t.equal(await (await svc.fetch('/openapi.json')).text(), JSON.stringify(doc), 'fixed when the app is built');
});

t.test('GET /openapi.json on an open service: only public Jobs, no security requirement', async (t) => {
  const svc = await startTestService(t, { token: null });
  const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as OpenApi;
  t.ok((await new Validator().validate(doc)).valid);
  t.equal(doc.security, undefined);
  const catalog = (await (await fetch(`${svc.url}/jobs`)).json()) as { answer: { items: Array<{ name: string }> } };
  const described = Object.keys(doc.paths).filter((p) => /^\/jobs\/[^/]+$/.test(p)).map((p) => p.slice(6)).sort();
  t.same(described, catalog.answer.items.map((i) => i.name).sort(), 'exactly the public Jobs');
});
