import { CallError, EXIT, UsageError } from './cli-errors.js';
import { resolveConnection } from './connection.js';
import { callJob } from './job-client.js';
import { commandFields } from './command-fields.js';
import { subCommand } from './sub-command.js';
import { uploadFile } from './upload-client.js';
import type { FileCopy } from '../schemas/workspace.js';

const USAGE = `usage: taskyard upload FILE... [--dir tmp/SUBDIR] [--to DIR]

Stages each FILE in the workspace with POST /files (streamed, never read whole) and prints its
staged path (tmp/.../<sha256>/<name>), sha256 and size, one line each (--output json: an array).
--dir stages under that tmp/ directory. --to then moves each staged file into DIR of the
workspace with move_entries (DIR/<name>; an existing file there is not replaced), and prints
where it went. Takes --url, --token, --target and --workspace like every command.`;

interface UploadArgs {
  files: string[];
  dir?: string;
  to?: string;
}

const VALUED: Readonly<Record<string, 'dir' | 'to'>> = { '--dir': 'dir', '--to': 'to' };

/** The command's own fields (globals already taken out); a UsageError says what is wrong. */
export function parseUploadFields(fields: readonly string[]): UploadArgs {
  const { values, words } = commandFields(fields, VALUED);
  for (const [flag, value] of Object.entries(values)) if (value === '') throw new UsageError(`--${flag} needs a value`);
  const args: UploadArgs = { files: words, ...values };
  if (args.files.length === 0) throw new UsageError('name at least one FILE to upload');
  if (args.dir !== undefined && args.dir !== 'tmp' && !args.dir.startsWith('tmp/')) throw new UsageError(`--dir must be under tmp/ (uploads are staged there; --to puts them elsewhere), got ${JSON.stringify(args.dir)}`);
  return args;
}

/** `taskyard upload ...`: returns the exit code. */
export function uploadCommand(argv: string[]): Promise<number> {
  return subCommand('taskyard upload', USAGE, ['upload', ...argv], async ({ options, fields }) => {
    const args = parseUploadFields(fields);
    const conn = await resolveConnection(options);
    const staged: Array<FileCopy & { file: string; moved_to?: string }> = [];
    for (const file of args.files) staged.push({ file, ...(await uploadFile(conn, file, undefined, { ...(args.dir === undefined ? {} : { directory: args.dir }), notFile: 'upload files one by one (a directory: pack it first, e.g. tar czf)' })) });
    if (args.to !== undefined) {
      const moves = staged.map((s) => ({ from: s.path, to: `${args.to!.replace(/\/+$/, '')}/${s.path.split('/').pop()}` }));
      const moved = await callJob(conn, 'move_entries', { moves });
      if (!moved.success) throw new CallError(`the files are staged (${staged.map((s) => s.path).join(', ')}) but moving them failed: ${String(moved.answer)}`);
      moves.forEach((m, i) => (staged[i]!.moved_to = m.to));
    }
    if (options.output === 'json') console.log(JSON.stringify(staged.map(({ file: _, ...copy }) => copy), null, 2));
    else for (const s of staged) console.log(`${s.moved_to ?? s.path}  sha256 ${s.sha256}  ${s.size} bytes`);
    return EXIT.success;
  });
}
