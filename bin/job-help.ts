import type { JobInfo } from './job-client.js';
import { flagOf } from './field-values.js';
import { typeLabel, type SchemaNode } from './schema-node.js';

const COMMANDS = `Commands:
  taskyard serve [--help]                        start the service
  taskyard <job> [--field value ...]             call a Job (list below; <job> --help for its parameters)
  taskyard submit --task NAME [--input v ...] [--follow]
                                                 start a Task (submit --task NAME --help: its inputs)
  taskyard logs TASK_ID [--follow]               print a Task's log (--follow: until it ends)
  taskyard run [--gpus N ...] -- PROGRAM [ARG ...]
                                                 run a command as a Task, follow it, exit with its code
  taskyard plugin install <package.tgz | dir>    install a plugin (a directory is packed with npm pack)
  taskyard plugin uninstall NAME                 remove a plugin
  taskyard plugin list                           list installed plugins
  taskyard plugin init NAME                      scaffold a TypeScript plugin in ./NAME
  taskyard task run MODULE --task NAME [--input v ...]
                                                 run a Task of a plugin module here, without a service
  taskyard sync push TASK_ID... --target ADDR    copy finished Tasks to another service
  taskyard download PATH [-o FILE]               fetch a workspace file (--task ID --artifact NAME: an artifact)
  taskyard upload FILE... [--dir tmp/D] [--to DIR]
                                                 stage files (POST /files), print path and sha256; --to moves them
  taskyard chat "MESSAGE" [--session ID]         talk to the service's research assistant (agent_chat)`;

export const OPTIONS = `Options:
  --url URL          service address (default TASKYARD_URL, else the address of the service
                     running on the workspace, else http://127.0.0.1:8420)
  --token TOKEN      bearer token (default TASKYARD_TOKEN, else <workspace>/.taskyard/token)
  --workspace DIR    workspace whose service and token file to use (default ~/.taskyard/workspace)
  --target ADDRESS   call another service directly, with --token or TASKYARD_TARGET_TOKEN
  --stream           use /jobs/<job>/events: print each event as one JSON line as it arrives
  --json OBJECT      raw arguments as a JSON object (--field flags add to or override them)
  --output FORMAT    json (default, for scripts) or text (tables and summaries for people;
                     with --stream, each event as a person reads it)
  --follow           submit only: stream the Task's progress and log, exit with its outcome
  --help, -h         this help; \`taskyard <job> --help\` lists the Job's parameters`;

/** General help; lists the service's Jobs when they could be fetched, or says why not. */
export function generalHelp(jobs?: readonly JobInfo[] | string): string {
  const lines = [
    'usage: taskyard <command | job> ... [options]',
    '',
    COMMANDS,
    '',
    'Calls a Job of a running taskyard service and prints its JobResponse as JSON. Parameters',
    "come from the Job's input schema: --task-id and --task_id both set task_id; numbers,",
    'booleans, arrays and objects are read as JSON; a boolean flag alone means true; repeat a flag',
    'to build an array. Exit code: 0 success, 1 failure, 2 usage error.',
    '',
    OPTIONS,
  ];
  if (typeof jobs === 'string') lines.push('', jobs);
  else if (jobs) lines.push('', 'Jobs:', ...jobs.map((j) => `  ${j.name.padEnd(32)} ${firstLine(j.description)}`));
  return lines.join('\n');
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 90 ? `${line.slice(0, 87)}...` : line;
}

/** Constraints worth telling a user before the service rejects the value. */
function constraints(schema: SchemaNode): string[] {
  const out: string[] = [];
  if (schema.minimum !== undefined) out.push(`>= ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) out.push(`> ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined) out.push(`<= ${schema.maximum}`);
  if (schema.exclusiveMaximum !== undefined) out.push(`< ${schema.exclusiveMaximum}`);
  if (schema.minLength !== undefined) out.push(`min length ${schema.minLength}`);
  if (schema.maxLength !== undefined) out.push(`max length ${schema.maxLength}`);
  if (schema.pattern !== undefined) out.push(`pattern ${schema.pattern}`);
  return out;
}

/** One line per parameter: flag, type, required or default, constraints, description. */
export function parameterLines(job: JobInfo): string[] {
  const properties = job.input_schema.properties ?? {};
  const required = new Set(job.input_schema.required ?? []);
  const names = Object.keys(properties);
  if (names.length === 0) return ['  (none)'];
  const flags = names.map((n) => `${flagOf(n)} <${typeLabel(properties[n]!)}>`);
  const width = Math.max(...flags.map((f) => f.length));
  return names.map((name, i) => {
    const schema = properties[name]!;
    const notes = [
      schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : required.has(name) ? 'required' : 'optional',
      ...constraints(schema),
    ];
    const description = schema.description ? `  ${schema.description}` : '';
    return `  ${flags[i]!.padEnd(width)}  (${notes.join(', ')})${description}`;
  });
}

/** `taskyard <job> --help`. */
export function jobHelp(job: JobInfo): string {
  return [`usage: taskyard ${job.name} [--field value ...] [options]`, '', job.description, '', 'Parameters:', ...parameterLines(job), '', OPTIONS].join('\n');
}
