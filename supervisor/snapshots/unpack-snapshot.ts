import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import { ValueError } from '../../core/errors.js';
import { classifyMember, SNAPSHOT_LIMITS } from './snapshot-rules.js';

/** The Task directories an archive carries, unpacked below a private staging directory. */
export interface UnpackedSnapshot {
  /** `<staging>/<task_type>/<task_id>` for each Task, keyed by Task ID. */
  readonly tasks: ReadonlyMap<string, { taskType: string; dir: string }>;
  readonly files: number;
  readonly bytes: number;
}

type Limits = typeof SNAPSHOT_LIMITS;

/** Writes one file member; the parser waits (backpressure) while the disk catches up. */
async function writeMember(entry: ReadEntry, path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // `wx`: a second member of the same name could only come from a crafted archive.
  const out = createWriteStream(path, { flags: 'wx', mode: 0o644 });
  entry.pipe(out);
  await finished(out);
}

/**
 * Reads a `.tar.gz` of `<task_type>/<task_id>/...` directories once, checking every member as it
 * arrives (type, name, duplicates, count, expanded size) and writing accepted files only below
 * `staging`, never into the workspace. The first problem stops reading and is thrown as a
 * ValueError naming it; the caller then discards `staging`.
 */
export async function unpackSnapshot(archive: string, staging: string, limits: Limits = SNAPSHOT_LIMITS): Promise<UnpackedSnapshot> {
  const tasks = new Map<string, { taskType: string; dir: string }>();
  const seen = new Set<string>();
  const writes: Promise<void>[] = [];
  let files = 0;
  let bytes = 0;
  let members = 0;
  let problem: Error | null = null;

  const source = createReadStream(archive);
  const parser = new Parser({ strict: true, noResume: true });
  const stop = (err: Error) => {
    problem ??= err;
    source.destroy();
    parser.abort(err);
  };
  parser.on('entry', (entry: ReadEntry) => {
    if (problem) return void entry.resume();
    try {
      if (++members > limits.members) throw new ValueError(`archive has more than ${limits.members} members`);
      const member = classifyMember(entry.path, entry.type);
      if (!member) return void entry.resume();
      const key = `${member.taskType}/${member.taskId}/${member.inner}`.replace(/\/$/, '');
      if (seen.has(key)) throw new ValueError(`archive contains ${key} twice`);
      seen.add(key);
      const dir = join(staging, member.taskType, member.taskId);
      if (!tasks.has(member.taskId)) {
        if (tasks.size >= limits.tasks) throw new ValueError(`archive carries more than ${limits.tasks} Task directories`);
        tasks.set(member.taskId, { taskType: member.taskType, dir });
      }
      if (member.kind === 'directory') {
        mkdirSync(join(dir, member.inner), { recursive: true, mode: 0o700 });
        return void entry.resume();
      }
      bytes += entry.size ?? 0;
      if (bytes > limits.expandedBytes) throw new ValueError(`archive expands to more than ${limits.expandedBytes} bytes`);
      files++;
      writes.push(writeMember(entry, join(dir, member.inner)).catch((err: Error) => stop(err)));
    } catch (err) {
      entry.resume();
      stop(err as Error);
    }
  });
  await new Promise<void>((resolve) => {
    parser.on('end', resolve);
    parser.on('error', (err: Error) => {
      problem ??= new ValueError(`not a valid .tar.gz archive: ${err.message}`);
      resolve();
    });
    source.on('error', (err) => stop(err));
    source.on('close', () => {
      if (problem) resolve();
    });
    source.pipe(parser as unknown as NodeJS.WritableStream);
  });
  await Promise.all(writes);
  const failure = problem as Error | null; // assigned in the callbacks above
  if (failure) throw failure instanceof ValueError ? failure : new ValueError(`cannot unpack the archive: ${failure.message}`);
  if (tasks.size === 0) throw new ValueError('archive carries no <task_type>/<task_id>/ directory');
  return { tasks, files, bytes };
}
