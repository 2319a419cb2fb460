import { splitArgs, type GlobalOptions } from './cli-args.js';
import { CallError, EXIT, UsageError } from './cli-errors.js';
import { resolveConnection, type Connection } from './connection.js';
import { parseFields, parseJsonArguments } from './field-values.js';
import { callJob, fetchCatalog, streamJob, type JobInfo } from './job-client.js';
import { generalHelp, jobHelp, parameterLines } from './job-help.js';

/** Finds the Job in the service's catalog; an unknown name is a usage error listing the Jobs. */
function findJob(jobs: readonly JobInfo[], name: string): JobInfo {
  const job = jobs.find((j) => j.name === name);
  if (!job) throw new UsageError(`unknown Job ${JSON.stringify(name)}; available Jobs: ${jobs.map((j) => j.name).join(', ') || '(none)'}`);
  return job;
}

/** Prints each event as one JSON line as it arrives; the outcome is the `result` event's. */
async function runStreamed(conn: Connection, job: string, args: Record<string, unknown>): Promise<number> {
  for await (const event of streamJob(conn, job, args)) {
    console.log(JSON.stringify(event));
    if (event.kind === 'result') return event['success'] === true ? EXIT.success : EXIT.failure;
  }
  console.error('taskyard: the stream ended without a result event');
  return EXIT.failure;
}

async function runJob(name: string, options: GlobalOptions, fields: string[]): Promise<number> {
  const conn = await resolveConnection(options);
  const job = findJob(await fetchCatalog(conn), name);
  if (options.help) {
    console.log(jobHelp(job));
    return EXIT.success;
  }
  let args: Record<string, unknown>;
  try {
    args = parseFields(fields, job.input_schema, parseJsonArguments(options.json));
  } catch (err) {
    if (err instanceof UsageError) err.message += `\n\nParameters of ${job.name}:\n${parameterLines(job).join('\n')}`;
    throw err;
  }
  if (options.stream) return runStreamed(conn, job.name, args);
  const response = await callJob(conn, job.name, args);
  console.log(JSON.stringify(response, null, 2));
  return response.success ? EXIT.success : EXIT.failure;
}

/** General help, with the service's Jobs when it can be reached. */
async function showGeneralHelp(options: GlobalOptions): Promise<void> {
  const jobs = await resolveConnection(options)
    .then(fetchCatalog)
    .catch(() => undefined);
  console.log(generalHelp(jobs));
}

/**
 * `taskyard <job> [--field value ...]`: calls the Job and returns the exit code (0 success,
 * 1 failure or refused call, 2 usage error). Messages go to stderr, the JobResponse to stdout.
 */
export async function jobCommand(argv: string[]): Promise<number> {
  try {
    const { job, options, fields } = splitArgs(argv);
    if (job === undefined) {
      if (!options.help) throw new UsageError(`name a Job to call\n\n${generalHelp()}`);
      await showGeneralHelp(options);
      return EXIT.success;
    }
    return await runJob(job, options, fields);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`taskyard: ${err.message}`);
      return EXIT.usage;
    }
    if (err instanceof CallError) {
      console.error(`taskyard: ${err.message}`);
      return EXIT.failure;
    }
    throw err;
  }
}
