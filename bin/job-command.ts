import { splitArgs, type GlobalOptions } from './cli-args.js';
import { CallError, EXIT, runCommand, UsageError } from './cli-errors.js';
import { resolveConnection, type Connection } from './connection.js';
import { checkRequired, parseFields, parseJsonArguments } from './field-values.js';
import { callJob, fetchCatalog, streamJob, type Catalog, type JobInfo } from './job-client.js';
import { closestNames } from '../core/closest-names.js';
import { generalHelp, jobHelp, OPTIONS, parameterLines } from './job-help.js';
import type { SchemaNode } from './schema-node.js';
import type { TaskDefinition } from '../schemas/tasks.js';
import type { WithJsonSchemas } from '../schemas/json-schema.js';
import { followTask } from './task-follow.js';
import { printResponse, TextEvents } from './text-output.js';

/**
 * Finds the Job in the service's catalog; an unknown name is a usage error with the closest names,
 * the Jobs there are, and the service's note on those it hides (an open service: why it has none).
 */
function findJob(catalog: Catalog, name: string): JobInfo {
  const { jobs, note } = catalog;
  const job = jobs.find((j) => j.name === name);
  if (job) return job;
  const closest = closestNames(name, jobs.map((j) => j.name));
  const lines = [
    `unknown Job ${JSON.stringify(name)}${closest.length ? ` (did you mean ${closest.join(', ')}?)` : ''}; available Jobs: ${jobs.map((j) => j.name).join(', ') || '(none)'}`,
    ...(note ? [`The service lists ${jobs.length ? 'only some' : 'no'} Jobs: ${note}.`] : []),
  ];
  throw new UsageError(lines.join('\n'));
}

/**
 * Prints each event as it arrives: one JSON line (the default), or with `--output text` as a
 * person reads it (TextEvents). The outcome is the `result` event's.
 */
async function runStreamed(conn: Connection, job: string, args: Record<string, unknown>, output: string | undefined): Promise<number> {
  const text = output === 'text' ? new TextEvents() : undefined;
  for await (const event of streamJob(conn, job, args)) {
    if (text) text.print(event);
    else console.log(JSON.stringify(event));
    if (event.kind === 'result') return event['success'] === true ? EXIT.success : EXIT.failure;
  }
  console.error('taskyard: the stream ended without a result event');
  return EXIT.failure;
}

/** The value of `--task NAME` / `--task=NAME` among the Job's tokens. */
function taskFlag(fields: readonly string[]): string | undefined {
  for (let i = 0; i < fields.length; i++) {
    const match = /^--task(?:=(.*))?$/s.exec(fields[i]!);
    if (match) return match[1] ?? fields[i + 1];
  }
  return undefined;
}

/**
 * Arguments of submit beside `task` that are not Task inputs, which its published schema does not
 * declare (the spec fixes it): declared here so `--no-cache` is a flag and help lists it.
 */
const SUBMIT_OPTIONS: Readonly<Record<string, SchemaNode>> = {
  no_cache: { type: 'boolean', description: 'Run the Task even when the result cache has its result' },
};

/**
 * `submit --task NAME`: the submit schema with the Task's own inputs in place of "any extra field",
 * so its flags are typed, its help lists them and a missing input is caught here. Without
 * `get_task_definition` (not public) the plain submit schema is used.
 */
async function submitJobFor(conn: Connection, submit: JobInfo, task: string, jobs: readonly JobInfo[]): Promise<JobInfo> {
  if (!jobs.some((j) => j.name === 'get_task_definition')) return { ...submit, input_schema: { ...submit.input_schema, properties: { ...submit.input_schema.properties, ...SUBMIT_OPTIONS } } };
  const response = await callJob(conn, 'get_task_definition', { task });
  if (!response.success) throw new UsageError(String(response.answer));
  const definition: WithJsonSchemas<TaskDefinition> = response.answer;
  const inputs = definition.input_schema;
  const input_schema: SchemaNode = {
    ...submit.input_schema,
    properties: { ...submit.input_schema.properties, ...SUBMIT_OPTIONS, ...inputs.properties },
    required: [...(submit.input_schema.required ?? []), ...(inputs.required ?? [])],
    additionalProperties: false,
  };
  return { name: `submit --task ${task}`, description: definition.description, input_schema };
}

/** Help when the service cannot be asked: the options, and why the parameters are missing. */
function offlineHelp(name: string, conn: Connection, err: CallError): string {
  return [`usage: taskyard ${name} [--field value ...] [options]`, '', `The parameters of ${name} come from the service, which could not be asked: ${err.message}`, `(service address: ${conn.url}; start it with \`taskyard serve\` or pass --url / --target)`, '', OPTIONS].join('\n');
}

async function runJob(name: string, options: GlobalOptions, fields: string[]): Promise<number> {
  const conn = await resolveConnection(options);
  let catalog: Catalog;
  try {
    catalog = await fetchCatalog(conn);
  } catch (err) {
    if (!options.help || !(err instanceof CallError)) throw err;
    console.log(offlineHelp(name, conn, err));
    return EXIT.success;
  }
  let job = findJob(catalog, name);
  const task = name === 'submit' ? taskFlag(fields) : undefined;
  if (task !== undefined) job = await submitJobFor(conn, job, task, catalog.jobs);
  if (options.help) {
    console.log(jobHelp(job));
    return EXIT.success;
  }
  if (options.follow && name !== 'submit') throw new UsageError('--follow is for submit (and `taskyard logs`)');
  let args: Record<string, unknown>;
  try {
    args = parseFields(fields, job.input_schema, parseJsonArguments(options.json));
    if (name === 'wait_task') args = await withCurrentRun(conn, args);
    checkRequired(args, job.input_schema);
  } catch (err) {
    if (err instanceof UsageError) err.message += `\n\nParameters of ${job.name}:\n${parameterLines(job).join('\n')}`;
    throw err;
  }
  if (options.stream) return runStreamed(conn, name, args, options.output);
  if (options.follow) return submitAndFollow(conn, args, options.output);
  const response = await callJob(conn, name, args);
  printResponse(response, options.output);
  return response.success ? EXIT.success : EXIT.failure;
}

/**
 * `wait_task --task-id ID` without `--run-id`: waits for the Task's current run (its status's
 * run_id, said on stderr). The Job itself needs the run_id, so that a wait never follows a run
 * other than the one its caller meant; a person at the command line means the current one.
 */
async function withCurrentRun(conn: Connection, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (typeof args['task_id'] !== 'string' || args['run_id'] !== undefined) return args;
  const status = await callJob(conn, 'status', { task_id: args['task_id'] });
  if (!status.success) throw new CallError(`the current run of ${args['task_id']} could not be looked up: ${String(status.answer)}`);
  console.error(`waiting for run ${status.answer.run_id} (the current run of ${args['task_id']}, ${status.answer.state})`);
  return { ...args, run_id: status.answer.run_id };
}

/** `submit --follow`: the submitted Task followed to its end; a refused submit is printed like any answer. */
async function submitAndFollow(conn: Connection, args: Record<string, unknown>, output: string | undefined): Promise<number> {
  const response = await callJob(conn, 'submit', args);
  if (!response.success) {
    printResponse(response, output);
    return EXIT.failure;
  }
  const handle = response.answer;
  console.error(`submitted ${handle.task_id}  (run ${handle.run_id})`);
  return followTask(conn, handle.task_id, { progress: true });
}

/** General help, with the service's Jobs when it can be reached (and a note when it cannot). */
async function showGeneralHelp(options: GlobalOptions): Promise<void> {
  const conn = await resolveConnection(options);
  const catalog = await fetchCatalog(conn).catch((err: Error) => `The service at ${conn.url} could not be asked for its Jobs: ${err.message}`);
  console.log(generalHelp(typeof catalog === 'string' ? catalog : catalog.jobs));
  if (typeof catalog !== 'string' && catalog.note) console.log(`\nThe service at ${conn.url} lists ${catalog.jobs.length ? 'only some' : 'no'} Jobs: ${catalog.note}.`);
}

/**
 * `taskyard <job> [--field value ...]`: calls the Job and returns the exit code (0 success,
 * 1 failure or refused call, 2 usage error). Messages go to stderr, the JobResponse to stdout.
 */
export function jobCommand(argv: string[]): Promise<number> {
  return runCommand('taskyard', undefined, async () => {
    const { job, options, fields } = splitArgs(argv);
    if (job === undefined) {
      if (!options.help) throw new UsageError(`name a Job to call\n\n${generalHelp()}`);
      await showGeneralHelp(options);
      return EXIT.success;
    }
    return await runJob(job, options, fields);
  });
}
