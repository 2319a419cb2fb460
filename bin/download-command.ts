import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CallError, EXIT, UsageError } from './cli-errors.js';
import { resolveConnection, type Connection } from './connection.js';
import { callJob, headers, request } from './job-client.js';
import { commandFields } from './command-fields.js';
import { subCommand } from './sub-command.js';
import type { ArtifactRecord } from '../schemas/tasks.js';

const USAGE = `usage: taskyard download PATH [-o FILE]
       taskyard download --task TASK_ID --artifact NAME [-o FILE]

Fetches a workspace file (PATH relative to the workspace) with GET /files, or a Task's artifact
by its logical name (checked against the sha256 the Task recorded). Writes FILE (default: the
file's own name in the current directory; "-" writes to standard output). Takes --url, --token,
--target and --workspace like every command.`;

interface DownloadArgs {
  path?: string;
  task?: string;
  artifact?: string;
  output?: string;
}

// `-o` only: `--output` is the CLI's global json|text switch.
const VALUED: Readonly<Record<string, keyof DownloadArgs>> = { '-o': 'output', '--task': 'task', '--artifact': 'artifact' };

/** The command's own fields (globals already taken out); a UsageError says what is wrong. Exported for its unit test. */
export function parseFields(fields: readonly string[]): DownloadArgs {
  const { values, words } = commandFields(fields, VALUED);
  if (words.length > 1) throw new UsageError(`one PATH at a time (got ${JSON.stringify(words[0])} and ${JSON.stringify(words[1])})`);
  const args: DownloadArgs = { ...values, ...(words[0] === undefined ? {} : { path: words[0] }) };
  const byArtifact = args.task !== undefined || args.artifact !== undefined;
  if (byArtifact && (args.task === undefined || args.artifact === undefined)) throw new UsageError('--task and --artifact go together');
  if (byArtifact === (args.path !== undefined)) throw new UsageError('name a PATH, or --task and --artifact');
  return args;
}

/** The workspace path and checksum of a Task's artifact, from its status (`<type>/<task_id>/<path>`). */
async function locateArtifact(conn: Connection, taskId: string, name: string): Promise<{ path: string; sha256: string }> {
  const response = await callJob(conn, 'status', { task_id: taskId });
  if (!response.success) throw new CallError(`status of ${taskId}: ${JSON.stringify(response.answer)}`);
  const status = response.answer;
  // A Task's output carries its artifacts by logical name (spec: Base output parameters).
  const artifacts = (status.result['artifacts'] ?? {}) as Record<string, ArtifactRecord>;
  const record = artifacts[name];
  if (!record) {
    const known = Object.keys(artifacts).sort();
    throw new CallError(`${taskId} has no artifact ${JSON.stringify(name)} (${known.length ? `it has: ${known.join(', ')}` : 'it has none'})`);
  }
  return { path: `${status.task_type}/${taskId}/${record.path}`, sha256: record.sha256 };
}

/** Streams the body to `output` (through a part file, so a broken download leaves nothing), hashing it. */
async function save(source: Readable, output: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  source.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
  });
  const target = output === '-' ? undefined : `${output}.part`;
  try {
    await pipeline(source, target === undefined ? process.stdout : createWriteStream(target), { end: target !== undefined });
  } catch (err) {
    if (target !== undefined) await rm(target, { force: true });
    throw new CallError(`download broke off: ${(err as Error).message}`);
  }
  if (target !== undefined) await rename(target, output);
  return { size, sha256: hash.digest('hex') };
}

/** `taskyard download ...`: returns the exit code. */
export function downloadCommand(argv: string[]): Promise<number> {
  // "download" stands in as the action word, so options may come first (`--task ... --artifact ...`).
  return subCommand('taskyard download', USAGE, ['download', ...argv], async ({ options, fields }) => {
    const args = parseFields(fields);
    const conn = await resolveConnection(options);
    const wanted = args.path !== undefined ? { path: args.path, sha256: undefined } : await locateArtifact(conn, args.task!, args.artifact!);
    const response = await request(conn, `/files?path=${encodeURIComponent(wanted.path)}`, { headers: headers(conn) });
    if (response.status !== 200) {
      const detail = ((await response.json().catch(() => ({}))) as { detail?: unknown }).detail;
      throw new CallError(`HTTP ${response.status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail ?? response.statusText)}`);
    }
    const output = args.output ?? basename(wanted.path);
    const saved = await save(response.body, output);
    if (wanted.sha256 !== undefined && saved.sha256 !== wanted.sha256) {
      if (output !== '-') await rm(output, { force: true });
      throw new CallError(`the artifact's checksum differs from the one the Task recorded (${saved.sha256} != ${wanted.sha256}); nothing kept`);
    }
    if (output !== '-') console.error(`taskyard: saved ${saved.size} bytes to ${output}`);
    return EXIT.success;
  });
}
