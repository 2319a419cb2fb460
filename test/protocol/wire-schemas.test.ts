import t from 'tap';
import type { Static, TSchema } from '@sinclair/typebox';
import { Health, JobCatalog, JobDescriptor, JobResponse, RequestEnvelope } from '../../schemas/job-response.js';
import { AgentBlockPatch, AgentMessageEvent, ArtifactEvent, LogEvent, ProgressEvent, ResultEvent } from '../../schemas/events.js';
import { MachineHealth, MachineInfo, ShellOutput } from '../../schemas/machine.js';
import { CsvPreview, DeletedEntry, FileCopy, MarkdownPreview, ParquetPreview, PreviewAnswer, StructuredPreview, TextPreview, UnsupportedPreview, WorkspaceEntry, WorkspaceListing } from '../../schemas/workspace.js';
import {
  ArtifactRecord,
  GraphNode,
  Relations,
  TaskContextAnswer,
  TaskDefinition,
  TaskGraph,
  TaskHandle,
  TaskLogChunk,
  TaskMetadata,
  TaskStatus,
  TaskStepStatus,
  BaseTaskInput,
  BaseTaskOutput,
} from '../../schemas/tasks.js';

/** A field as a SPEC.md table gives it: its type, and its default or "Required: no" when named. */
interface Field {
  /** `string`, `integer|null`, `datetime`, a literal such as `"log"`; `*` where the spec does not show the type. */
  type: string;
  default?: unknown;
  optional?: true;
}
interface Table {
  schema: TSchema;
  fields: Record<string, Field>;
  /** Fields the service adds beyond the spec's table. */
  extras?: string[];
}

const req = (type: string): Field => ({ type });
const def = (type: string, value: unknown): Field => ({ type, default: value });
const opt = (type: string): Field => ({ type, optional: true });
const shown = (names: string[]): Record<string, Field> => Object.fromEntries(names.map((n) => [n, req('*')]));

const STATES = '"queued"|"running"|"succeeded"|"failed"|"cancelled"';
const stamp = def('datetime|null', null);

/** SPEC.md's tables ("Resources and their fields" and "Events"), transcribed. */
const SPEC: Record<string, Table> = {
  RequestEnvelope: { schema: RequestEnvelope, fields: { arguments: def('object', {}), target: opt('string') } },
  JobResponse: { schema: JobResponse, fields: { answer: def('any', ''), success: def('boolean', true), metadata: def('object', {}) } },
  JobCatalog: { schema: JobCatalog, fields: { items: req('array'), total: req('integer') } },
  'Job descriptor': { schema: JobDescriptor, fields: { name: req('string'), description: req('string'), input_schema: req('object'), output_schema: req('object') } },
  Health: { schema: Health, fields: { running: req('boolean') } },
  MachineHealth: { schema: MachineHealth, fields: { address: req('string'), healthy: req('boolean') } },
  MachineInfo: { schema: MachineInfo, fields: { axonx: req('object'), cpu: req('object'), memory: req('object'), gpus: req('array') }, extras: ['gpu_leases'] },
  'MachineInfo.axonx': { schema: MachineInfo.properties.axonx, fields: { version: req('string'), git_commit: req('string|null'), git_branch: req('string|null') } },
  'MachineInfo.cpu': { schema: MachineInfo.properties.cpu, fields: { total_cores: req('integer|null'), physical_cores: req('integer|null'), usage_percent: req('number') } },
  'MachineInfo.memory': {
    schema: MachineInfo.properties.memory,
    fields: { total_bytes: req('integer'), used_bytes: req('integer'), available_bytes: req('integer'), usage_percent: req('number') },
  },
  ShellOutput: {
    schema: ShellOutput,
    fields: { stdout: req('string'), stderr: req('string'), exit_code: req('integer|null'), stdout_truncated: req('boolean'), stderr_truncated: req('boolean') },
  },
  WorkspaceListing: { schema: WorkspaceListing, fields: { path: req('string'), entries: req('array'), truncated: req('boolean') } },
  'WorkspaceListing entry': { schema: WorkspaceEntry, fields: shown(['name', 'path', 'kind', 'preview_kind', 'supported', 'size', 'modified_at']) },
  'Preview text': { schema: TextPreview, fields: { kind: req('"text"'), size: req('integer'), ...shown(['content', 'truncated']) } },
  'Preview markdown': { schema: MarkdownPreview, fields: { kind: req('"markdown"'), size: req('integer'), ...shown(['content', 'frontmatter', 'frontmatter_error', 'truncated']) } },
  'Preview json / yaml': { schema: StructuredPreview, fields: { kind: req('"json"|"yaml"'), size: req('integer'), ...shown(['content', 'data', 'truncated']), parse_error: req('string|null') } },
  'Preview csv': { schema: CsvPreview, fields: { kind: req('"csv"'), size: req('integer'), ...shown(['columns', 'rows', 'offset', 'limit', 'has_more']) } },
  'Preview parquet': {
    schema: ParquetPreview,
    fields: { kind: req('"parquet"'), size: req('integer'), ...shown(['columns', 'rows', 'offset', 'limit', 'has_more', 'column_schema', 'row_count', 'row_group_count']) },
  },
  'Preview unsupported': { schema: UnsupportedPreview, fields: { kind: req('"unsupported"'), size: req('integer') } },
  DeletedEntry: { schema: DeletedEntry, fields: { deleted: req('string'), kind: req('"file"|"directory"') } },
  FileCopy: { schema: FileCopy, fields: { path: req('string'), sha256: req('string'), size: req('integer') } },
  'Base input parameters': { schema: BaseTaskInput, fields: { task_name: def('string|null', null), source_tasks: def('string', '') } },
  'Base output parameters': { schema: BaseTaskOutput, fields: { artifacts: def('object', {}) } },
  TaskDefinition: {
    schema: TaskDefinition,
    fields: {
      name: req('string'),
      source: req('"native"|"plugin"'),
      plugin: req('string|null'),
      task_type: req('string'),
      description: req('string'),
      input_schema: req('object'),
      output_schema: req('object'),
    },
    extras: ['resources', 'retries', 'cache'],
  },
  TaskHandle: { schema: TaskHandle, fields: { task_id: req('string'), run_id: req('string'), task: req('string') } },
  TaskStatus: {
    schema: TaskStatus,
    fields: {
      task_id: req('string'),
      run_id: req('string'),
      task_type: req('string'),
      task_name: def('string', ''),
      config: def('object', {}),
      state: def(STATES, 'queued'),
      pid: req('integer|null'),
      created_at: req('datetime|null'),
      started_at: req('datetime|null'),
      finished_at: req('datetime|null'),
      steps: def('array', []),
      result: def('object', {}),
      error: def('string', ''),
      exit_code: def('integer', 0),
      log_path: def('string', ''),
    },
  },
  TaskStepStatus: { schema: TaskStepStatus, fields: { name: req('string'), started_at: req('datetime|null'), finished_at: req('datetime|null'), percentage: req('number|null') } },
  TaskMetadata: {
    schema: TaskMetadata,
    fields: { task_id: req('string'), reg_name: req('string'), created_at: req('datetime'), task_type: req('string'), input_params: req('object'), output_params: req('object') },
  },
  'Artifact record': { schema: ArtifactRecord, fields: { path: req('string'), size: req('integer'), sha256: req('string') } },
  TaskLogChunk: {
    schema: TaskLogChunk,
    fields: {
      content: req('string'),
      start_offset: req('integer'),
      next_offset: req('integer'),
      file_size: req('integer'),
      has_more_before: req('boolean'),
      has_more_after: req('boolean'),
      reset: req('boolean'),
    },
  },
  'Task graph': { schema: TaskGraph, fields: { root_id: req('string'), selected_id: req('string'), nodes: req('array'), edges: req('array') } },
  'Task graph node': {
    schema: GraphNode,
    fields: { ...shown(['task_id', 'kind', 'task_name', 'created_at', 'state']), parent_ids: req('array'), missing: req('boolean'), provisional: req('boolean') },
  },
  'Task context': {
    schema: TaskContextAnswer,
    fields: {
      task_id: req('string'),
      status: req('object'),
      metadata_exists: req('boolean'),
      metadata_path: req('string'),
      log_path: req('string|null'),
      graph: req('object'),
      relations: req('object'),
    },
  },
  'Task context relations': {
    schema: Relations,
    fields: { direct_upstream: req('array'), ancestors: req('array'), direct_downstream: req('array'), missing: req('array'), provisional: req('array') },
  },
  'event progress': { schema: ProgressEvent, fields: { kind: req('"progress"'), name: req('string'), started_at: stamp, finished_at: stamp, percentage: def('number|null', null) } },
  'event log': {
    schema: LogEvent,
    fields: {
      kind: req('"log"'),
      content: def('string', ''),
      start_offset: def('integer', 0),
      next_offset: def('integer', 0),
      file_size: def('integer', 0),
      has_more_before: def('boolean', false),
      has_more_after: def('boolean', false),
      reset: def('boolean', false),
      channel: def('string', 'task'),
    },
  },
  'event artifact': {
    schema: ArtifactEvent,
    fields: { kind: req('"artifact"'), path: req('string'), sha256: def('string', ''), size: def('integer', 0), media_type: def('string|null', null), extra: def('object', {}) },
  },
  'event agent_message': {
    schema: AgentMessageEvent,
    fields: { kind: req('"agent_message"'), session_id: req('string'), type_name: req('string'), message: req('object'), sequence: req('integer'), presentation: def('array', []) },
  },
  AgentBlockPatch: {
    schema: AgentBlockPatch,
    fields: {
      operation: req('"start"|"append"|"replace"|"finish"'),
      block_id: req('string'),
      block_type: req('"thinking"|"text"|"tool"|"system"|"error"'),
      delta: def('string', ''),
      payload: def('object', {}),
    },
  },
  'event result': { schema: ResultEvent, fields: { kind: req('"result"'), answer: def('any', ''), success: def('boolean', true), metadata: def('object', {}) } },
};

type Node = { type?: string; format?: string; const?: unknown; anyOf?: Node[]; properties?: Record<string, Node>; required?: string[]; default?: unknown };

const sorted = (type: string): string => [...new Set(type.split('|'))].sort().join('|');

/** The schema's type in the notation above: JSON types, `datetime` for date-time strings, literals as JSON. */
export function typeOf(schema: Node): string {
  if (schema.anyOf) return sorted(schema.anyOf.map(typeOf).join('|'));
  if ('const' in schema) return JSON.stringify(schema.const);
  if (schema.type === 'string' && schema.format === 'date-time') return 'datetime';
  return schema.type ?? 'any';
}

t.test("every wire schema has the spec table's fields, required-ness, types and defaults", async (t) => {
  for (const [name, table] of Object.entries(SPEC)) {
    const schema = table.schema as Node;
    const properties = schema.properties ?? {};
    const required = new Set(schema.required ?? []);
    const extras = table.extras ?? [];
    t.same(Object.keys(properties).filter((k) => !extras.includes(k)).sort(), Object.keys(table.fields).sort(), `${name}: the spec's fields, no others`);
    for (const extra of extras) t.ok(extra in properties, `${name}: the allowed extra ${extra} exists`);
    for (const [field, spec] of Object.entries(table.fields)) {
      const actual = properties[field];
      if (!actual) continue;
      if (spec.type !== '*') t.equal(typeOf(actual), sorted(spec.type), `${name}.${field}: type`);
      if ('default' in spec) t.same(actual.default, spec.default, `${name}.${field}: default`);
      // A field with a default is always present once validated, so either required-ness is right.
      else t.equal(required.has(field), !spec.optional, `${name}.${field}: ${spec.optional ? 'optional' : 'required'}`);
    }
  }
});

t.test('the preview answer is exactly the spec kinds', async (t) => {
  const kinds = (PreviewAnswer.anyOf as Node[]).map((member) => typeOf(member.properties!['kind']!));
  t.same(sorted(kinds.join('|')), sorted('"text"|"markdown"|"json"|"yaml"|"csv"|"parquet"|"unsupported"'));
});

t.test('the comparison notices a disagreement (so the test above can fail)', async (t) => {
  t.equal(typeOf({ anyOf: [{ type: 'integer' }, { type: 'null' }] }), 'integer|null');
  t.equal(typeOf({ type: 'string', format: 'date-time' }), 'datetime');
  t.not(typeOf(TaskHandle.properties.task_id as Node), sorted('integer'), 'a string field is not read as an integer');
  t.not(typeOf(ShellOutput.properties.exit_code as Node), 'integer', 'a nullable field is not read as non-null');
});

// Compile-time: a status's state is the TaskState union, not any string (`npm run build` fails otherwise).
// @ts-expect-error "done" is not a TaskState
const notAState: Static<typeof TaskStatus>['state'] = 'done';
void notAState;
