import { jsonSchema, tool, type ToolSet } from 'ai';
import { createJobContext, type JobScope } from '../../core/job.js';
import { HttpError } from '../../core/errors.js';
import type { JobArgs, JobRegistry } from '../../core/registry.js';
import type { CallerTag } from '../../core/caller.js';
import { failed, plainAnswer, type JobResponse } from '../../schemas/job-response.js';
import { describeIssues } from '../../schemas/validator.js';

/**
 * Calls a Job the way every transport does: the public catalog, the shared validation, the
 * registry's error mapping. So the agent can do nothing its caller could not. Always answers a
 * JobResponse, which is what the model reads back.
 */
export async function callJob(registry: JobScope, name: string, input: unknown, signal: AbortSignal, caller?: CallerTag): Promise<JobResponse> {
  const entry = registry.get(name);
  if (!entry) return failed(`PermissionError: ${name} is not a public Job of this service`);
  let args: JobArgs;
  try {
    args = registry.prepare(entry, structuredClone(input ?? {}));
  } catch (err) {
    if (!(err instanceof HttpError) || typeof err.detail === 'string') throw err;
    const issues = err.detail.map((i) => ({ ...i, loc: i.loc.slice(2) }));
    return failed(`ValueError: invalid arguments for ${name}: ${describeIssues(issues)}`);
  }
  const response = await registry.execute(entry, args, createJobContext(() => [signal], false, undefined, caller), 'agent');
  // The model reads one JSON value: a streamed or pre-serialized answer is made whole here.
  return response ? plainAnswer(response) : failed(`RuntimeError: ${name} produced no result`);
}

/**
 * The model's tools: the Jobs named in `agent.tools` that this service makes public, described by
 * their own input schemas. A name the model invents, or a Job not listed, is not among them (whatever
 * the name, Object.prototype's members included): the client library refuses the call and tells
 * the model which tools exist.
 */
export function buildTools(registry: JobRegistry, names: readonly string[], caller?: CallerTag): ToolSet {
  // No prototype: the client library looks a called name up by index, and a name like
  // `constructor` or `__proto__` must find nothing, like any other name the model invents.
  const tools = Object.create(null) as ToolSet;
  // A turn started with a scoped token gets only the tools its token may call, and each call is
  // audited as an `agent` call of that token.
  const scope = caller?.scope ?? registry;
  const agentCaller: CallerTag | undefined = caller && { ...caller, transport: 'agent' };
  for (const name of names) {
    const entry = scope.get(name);
    if (!entry) continue;
    tools[name] = tool({
      description: entry.job.description,
      inputSchema: jsonSchema<unknown>(entry.job.input),
      execute: (input: unknown, { abortSignal }) => callJob(scope, name, input, abortSignal ?? new AbortController().signal, agentCaller),
    });
  }
  return tools;
}
