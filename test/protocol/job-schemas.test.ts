import t from 'tap';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import type { JobCatalog } from '../../schemas/job-response.js';

type Bounds = Record<string, unknown>;
interface SpecJob {
  /** Parameters as the spec's table gives them: type plus every default and bound it names. */
  params: Record<string, Bounds>;
  required: string[];
  /** "Only the listed fields are accepted": the schema closes the object. */
  closed: boolean;
}

const none: SpecJob = { params: {}, required: [], closed: true };
const id = { type: 'string' };
const id1 = { type: 'string', minLength: 1 };

/**
 * SPEC.md's tables, transcribed: "Machine Jobs", "Workspace Jobs", "Task Jobs" and "Limits".
 * A parameter with a default is never required (the issue: clients must see it is optional).
 */
const SPEC: Record<string, SpecJob> = {
  version: none,
  list_machines: none,
  machine_status: none,
  shell: { params: { command: id1, timeout: { type: 'number', default: 30, exclusiveMinimum: 0, maximum: 300 } }, required: ['command'], closed: true },
  list_entries: { params: { path: { type: 'string', default: '' } }, required: [], closed: true },
  list_task_runs: { params: { task_type: { type: 'string', minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' } }, required: ['task_type'], closed: true },
  preview_file: {
    params: { path: { type: 'string' }, offset: { type: 'integer', default: 0, minimum: 0 }, limit: { type: 'integer', default: 200, minimum: 1, maximum: 5000 } },
    required: ['path'],
    closed: true,
  },
  delete_entries: { params: { paths: { type: 'array', minItems: 1, maxItems: 200 } }, required: ['paths'], closed: true },
  list_installed_task_definitions: none,
  get_task_definition: { params: { task: id1 }, required: ['task'], closed: true },
  submit: { params: { task: id }, required: ['task'], closed: false },
  wait_task: { params: { task_id: id1, run_id: id1, poll_interval: { type: 'number', default: 1, exclusiveMinimum: 0 } }, required: ['task_id', 'run_id'], closed: true },
  list_task_ids: none,
  list_task_statuses: none,
  status: { params: { task_id: id }, required: ['task_id'], closed: false },
  read_task_log: {
    params: { task_id: id, offset: { type: 'integer', default: -1, minimum: -1 }, limit: { type: 'integer', default: 65536, minimum: 1024, maximum: 262144 } },
    required: ['task_id'],
    closed: false,
  },
  stream_task: { params: { task_id: id1, poll_interval: { type: 'number', default: 0.5, exclusiveMinimum: 0 } }, required: ['task_id'], closed: true },
  get_task_graph: { params: { task_id: id }, required: ['task_id'], closed: true },
  get_task_context: { params: { task_id: id1 }, required: ['task_id'], closed: true },
  cancel: { params: { task_id: id }, required: ['task_id'], closed: false },
  delete_tasks: { params: { task_ids: { type: 'array', minItems: 1, uniqueItems: true } }, required: ['task_ids'], closed: false },
};

interface ObjectSchema {
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: unknown;
}

// One service for every test: they read the published schemas, and one runs a Task of its own.
const svc = await startTestService(t);

t.test("every Job's published schema has the spec's required list, defaults and bounds (GET /jobs and tools/list)", async (t) => {
  const catalog = ((await (await svc.fetch('/jobs')).json()) as { answer: JobCatalog }).answer;
  const { tools } = await (await connectMcp(t, svc.url, svc.token)).listTools();
  const published = new Map<string, { jobs: ObjectSchema; mcp: ObjectSchema }>();
  for (const item of catalog.items) published.set(item.name, { jobs: item.input_schema as ObjectSchema, mcp: tools.find((x) => x.name === item.name)!.inputSchema as ObjectSchema });

  for (const [name, spec] of Object.entries(SPEC)) {
    const schemas = published.get(name);
    if (!t.ok(schemas, `${name} is published`)) continue;
    for (const [where, schema] of Object.entries(schemas!)) {
      t.same([...(schema.required ?? [])].sort(), [...spec.required].sort(), `${where} ${name}: required`);
      t.same(Object.keys(schema.properties ?? {}).sort(), Object.keys(spec.params).sort(), `${where} ${name}: parameters`);
      for (const [param, bounds] of Object.entries(spec.params)) {
        const actual = schema.properties?.[param] ?? {};
        for (const [key, value] of Object.entries(bounds)) t.same(actual[key], value, `${where} ${name}.${param}: ${key}`);
        if ('default' in bounds) t.notOk(schema.required?.includes(param), `${where} ${name}.${param}: a default makes it optional`);
      }
      if (spec.closed) t.equal(schema.additionalProperties, false, `${where} ${name}: only the listed fields are accepted`);
      else t.not(schema.additionalProperties, false, `${where} ${name}: extra fields are not refused`);
    }
  }
});

t.test('optional parameters get their defaults: wait_task and read_task_log without them', async (t) => {
  const submitted = await svc.call('submit', { task: 'sleep', seconds: 0 });
  const { task_id, run_id } = submitted.body.answer;
  const waited = await svc.call('wait_task', { task_id, run_id });
  t.equal(waited.body.success, true, JSON.stringify(waited.body));
  const log = await svc.call('read_task_log', { task_id });
  t.equal(log.body.success, true);
  t.match(log.body.answer, { start_offset: 0, content: /step 1\/1/ }, 'offset -1 (the tail) of a short log is its start');
});

t.test('MCP explains itself: instructions, annotations, MCP-worded descriptions and errors', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const instructions = mcp.getInstructions() ?? '';
  for (const word of ['list_installed_task_definitions', 'get_task_definition', 'submit', 'wait_task', 'stream_task', 'read_task_log', 'progress']) {
    t.match(instructions, word, `instructions mention ${word}`);
  }
  const { tools } = await mcp.listTools();
  const tool = (name: string) => tools.find((x) => x.name === name)!;
  for (const x of tools) t.notMatch(x.description ?? '', '/events', `${x.name}: no HTTP route in its text`);
  for (const name of ['status', 'list_task_statuses', 'read_task_log', 'wait_task', 'stream_task', 'list_entries', 'preview_file', 'machine_status', 'get_task_definition']) {
    t.match(tool(name).annotations, { readOnlyHint: true }, `${name} is read-only`);
  }
  for (const name of ['shell', 'cancel', 'delete_tasks', 'delete_entries']) t.match(tool(name).annotations, { destructiveHint: true, readOnlyHint: false }, `${name} is destructive`);
  t.match(tool('status').annotations, { idempotentHint: true });
  t.match(tool('shell').annotations, { idempotentHint: false });
  t.match(tool('submit').description, /get_task_definition/, 'submit says where its inputs are described');

  const invalid = await mcp.callTool({ name: 'wait_task', arguments: { task_id: 'x' } }).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(invalid instanceof McpError && invalid.code === ErrorCode.InvalidParams, 'InvalidParams');
  t.match((invalid as Error).message, 'arguments.run_id');
  t.notMatch((invalid as Error).message, 'body', 'no HTTP words');
});
