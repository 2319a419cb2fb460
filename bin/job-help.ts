import type { JobInfo } from './job-client.js';
import { typeLabel, type SchemaNode } from './schema-node.js';

const OPTIONS = `Options:
  --url URL          service address (default TASKYARD_URL or http://127.0.0.1:8420)
  --token TOKEN      bearer token (default TASKYARD_TOKEN, else <workspace>/.taskyard/token)
  --workspace DIR    workspace whose token file to use (default ~/.taskyard/workspace)
  --target ADDRESS   call another service directly, with --token or TASKYARD_TARGET_TOKEN
  --stream           use /jobs/<job>/events: print each event as one JSON line as it arrives
  --json OBJECT      raw arguments as a JSON object (--field flags add to or override them)
  --help, -h         this help; \`taskyard <job> --help\` lists the Job's parameters`;

/** General help; lists the service's Jobs when they could be fetched. */
export function generalHelp(jobs?: readonly JobInfo[]): string {
  const lines = [
    'usage: taskyard <job> [--field value ...] [options]',
    '       taskyard serve [--help]',
    '',
    'Calls a Job of a running taskyard service and prints its JobResponse as JSON. Parameters',
    "come from the Job's input schema: --task-id and --task_id both set task_id; numbers,",
    'booleans, arrays and objects are read as JSON; a boolean flag alone means true; repeat a flag',
    'to build an array. Exit code: 0 success, 1 failure, 2 usage error.',
    '',
    OPTIONS,
  ];
  if (jobs) lines.push('', 'Jobs:', ...jobs.map((j) => `  ${j.name.padEnd(32)} ${firstLine(j.description)}`));
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
  const flags = names.map((n) => `--${n.replace(/_/g, '-')} <${typeLabel(properties[n]!)}>`);
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
