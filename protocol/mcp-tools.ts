import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { JobResponse, responseSchemaOf } from '../schemas/job-response.js';
import { Type } from '../vendor/typebox.js';
import { TASK_RESULT_ANSWERS, TASK_TOOLS, toolResult, type McpTasks } from './mcp-tasks.js';
import { describeIssues, type ValidationIssue } from '../schemas/validator.js';
import { PACKAGE_VERSION } from '../core/build-info.js';
import { HttpError } from '../core/errors.js';
import type { CallerTag } from '../core/caller.js';
import { createJobContext, type JobContext } from '../core/job.js';
import type { JobArgs, JobRegistry, RegisteredJob } from '../core/registry.js';
import { NO_RESULT } from './job-routes.js';
import { ProgressReporter, progressTo } from './mcp-progress.js';
import { baseUrlOf } from './mcp-resource-links.js';

export interface McpToolsOptions {
  registry: JobRegistry;
  shutdown: AbortSignal;
  /** With a progress token, the longest silence between progress notifications of a call. */
  progressIntervalMs: number;
  /** MCP Tasks over the service's Task records, when the Jobs behind them are public. */
  tasks?: McpTasks;
  /** Who calls through this server (every call of a pooled server comes with the same token). */
  caller?: CallerTag;
}

/** Told to every client at initialize: how the tools fit together to run work. */
export const SERVER_INSTRUCTIONS = [
  'taskyard runs work on this machine. To run a Task: find it with list_installed_task_definitions and read its',
  'inputs with get_task_definition; start it with submit (task = registration name, every other argument is one of',
  "the Task's inputs). Then loop: call await_task with the task_id and run_id from submit's answer; it answers within",
  'about 45 s with the TaskStatus and metadata.done; while done is false the Task is still running (not an error): call',
  'await_task again. Once done, read the result (status.result, its artifacts: the tool result links each artifact as a',
  'resource_link to download) and decide what to run next. wait_task and stream_task wait without a bound; use them only',
  'with a progress token and a client that resets its timeout on progress. Read logs by byte offsets with read_task_log',
  '(offset -1 = tail, then continue from next_offset). shell runs a one-off command (at most 300 s). cancel stops a Task.',
  'Every tool answers a JobResponse {answer, success, metadata}: check success. Tools outside your token\'s scope are not listed.',
].join(' ');

// Shared by every per-request server: by default each Server builds its own ajv instance, which
// costs more than the whole tool call.
const schemaValidator = new AjvJsonSchemaValidator();

/**
 * The tool of a Job; built once per Job and tasks capability, since tools/list answers the same
 * every time (a scoped token's server may lack the tasks capability the service token's has).
 */
const tools = { withTasks: new WeakMap<RegisteredJob, Tool>(), plain: new WeakMap<RegisteredJob, Tool>() };
function toolOf(entry: RegisteredJob, withTasks: boolean): Tool {
  const built = withTasks ? tools.withTasks : tools.plain;
  let tool = built.get(entry);
  if (!tool) {
    const { job } = entry;
    // A client validates every result of a tool against its outputSchema, tasks/result included:
    // where a task's result differs from the tool's own answer, the schema allows both.
    const taskAnswer = withTasks ? TASK_RESULT_ANSWERS[job.name] : undefined;
    tool = {
      ...(withTasks && TASK_TOOLS.has(job.name) ? { execution: { taskSupport: 'optional' as const } } : {}),
      name: job.name,
      description: job.description,
      inputSchema: job.input,
      outputSchema: taskAnswer ? responseSchemaOf(job.name, Type.Union([job.output, taskAnswer])) : entry.response,
      ...(job.annotations ? { annotations: { ...job.annotations } } : {}),
    };
    built.set(entry, tool);
  }
  return tool;
}

const TOOL_CAPABILITIES = { tools: { listChanged: false } };
const TASK_CAPABILITIES = { ...TOOL_CAPABILITIES, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } };

/** Validation issues in MCP's own words: `arguments.run_id`, with no HTTP body around it. */
function invalidArguments(entry: RegisteredJob, issues: ValidationIssue[]): McpError {
  const located = issues.map((i) => ({ ...i, loc: i.loc[0] === 'body' ? i.loc.slice(1) : i.loc }));
  return new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${entry.job.name}: ${describeIssues(located)}`);
}

/**
 * The Job behind a `tools/call` and its checked arguments, or MCP's own error for either; a tool
 * outside the caller's scope is refused (and audited) before its arguments are even read.
 */
export function resolveCall(registry: JobRegistry, name: string, raw: Record<string, unknown> | undefined, caller?: CallerTag): { entry: RegisteredJob; args: JobArgs } {
  const entry = registry.get(name);
  if (!entry) {
    if (caller && registry.refuses(name)) throw new McpError(ErrorCode.InvalidParams, registry.refusal(name, caller).message);
    throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
  }
  try {
    return { entry, args: registry.prepare(entry, raw ?? {}) };
  } catch (err) {
    if (err instanceof HttpError && Array.isArray(err.detail)) throw invalidArguments(entry, err.detail as ValidationIssue[]);
    throw err;
  }
}

/** Runs a resolved call: its JobResponse as the Job gave it (an answer may still be serialized or streamed). */
export async function runTool(registry: JobRegistry, entry: RegisteredJob, args: JobArgs, ctx: JobContext): Promise<JobResponse> {
  return (await registry.execute(entry, args, ctx, 'mcp')) ?? NO_RESULT;
}

/**
 * A low-level MCP server whose handlers are fed by the Job registry. `caller()` is the abort of
 * the HTTP request being served: a caller that disconnects aborts its Jobs, as on the JSON and
 * SSE routes.
 */
export function buildServer(opts: McpToolsOptions, caller: () => AbortSignal): Server {
  const tasks = opts.tasks?.availableTo(opts.registry) ? opts.tasks : undefined;
  const server = new Server(
    { name: 'taskyard', version: PACKAGE_VERSION },
    { capabilities: tasks ? TASK_CAPABILITIES : TOOL_CAPABILITIES, instructions: SERVER_INSTRUCTIONS, jsonSchemaValidator: schemaValidator },
  );
  tasks?.install(server, caller, opts.progressIntervalMs);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: opts.registry.list().map((e) => toolOf(e, tasks !== undefined)) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const callerGone = caller();
    const { entry, args } = resolveCall(opts.registry, request.params.name, request.params.arguments, opts.caller);
    const token = extra._meta?.progressToken;
    if (request.params.task) {
      if (!tasks || !TASK_TOOLS.has(entry.job.name)) throw new McpError(ErrorCode.InvalidParams, `${entry.job.name} cannot run as an MCP task (tools that can: ${[...TASK_TOOLS].join(', ')})`);
      return { task: await tasks.create(entry.job.name, args, callerGone, request.params.task.ttl, token, opts.caller) };
    }
    // With a progress token the Job runs as for an event stream, and its events become progress
    // notifications (the answer then turns into SSE); without one it answers plain JSON.
    const reporter = token === undefined ? undefined : new ProgressReporter(entry.job.name, progressTo(extra.sendNotification, [token]), opts.progressIntervalMs);
    const ctx = createJobContext(() => [callerGone, extra.signal, opts.shutdown], reporter !== undefined, reporter && ((event) => reporter.note(event)), opts.caller);
    try {
      const base = baseUrlOf(extra.requestInfo?.headers as Record<string, string> | undefined);
      return await toolResult(await runTool(opts.registry, entry, args, ctx), entry.job.name, base);
    } finally {
      reporter?.stop();
    }
  });
  return server;
}
