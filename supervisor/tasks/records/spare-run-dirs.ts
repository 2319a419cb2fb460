import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TASK_FILES } from '../../../core/task-record/record-files.js';

/** A spare run directory, taken: its empty `status.json` is open for writing. */
export interface SpareDir {
  readonly path: string;
  /** The descriptor of its `status.json`, checked to be an empty regular file. */
  readonly record: number;
}

/** An existing file, for writing: a link is not followed, a FIFO does not block the open. */
const WRITE_EXISTING = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Run directories made ahead of need, each holding an empty `status.json` and `events.jsonl`.
 * Creating a file or a directory costs 0.15-0.5 ms of kernel time on this machine's ext4, and a
 * submit made three of them before its run could start (about a third of submit → running). A
 * submit now takes a spare, writes its record into it and renames it into place: the directory
 * still appears whole or not at all. Spares are made again in the background, after the submit.
 *
 * They live in the service's private directory, on the workspace's file system; a Task could
 * still replace one, so a spare is checked as it is taken (a plain directory whose `status.json`
 * is an empty regular file, opened without following links) and dropped otherwise.
 */
export class SpareRunDirs {
  readonly #dir: string;
  readonly #size: number;
  readonly #ready: string[] = [];
  #making = 0;
  #counter = 0;
  #closed = false;

  /** `dir`: where spares are made (emptied at start); `size`: how many are kept ready. */
  constructor(dir: string, size: number) {
    this.#dir = dir;
    this.#size = size;
  }

  /** Removes the spares a previous service left and makes the first ones. */
  async start(): Promise<void> {
    await rm(this.#dir, { recursive: true, force: true });
    await mkdir(this.#dir, { recursive: true });
    this.refill();
  }

  /** How many spares are ready to be taken. */
  get ready(): number {
    return this.#ready.length;
  }

  /** A checked spare, or undefined when none is ready (the caller creates the directory itself). */
  take(): SpareDir | undefined {
    for (let path = this.#ready.shift(); path !== undefined; path = this.#ready.shift()) {
      const record = openRecord(path);
      if (record !== undefined) return { path, record };
      this.drop(path);
    }
    return undefined;
  }

  /** Removes a spare that was taken but not used. */
  drop(path: string): void {
    rm(path, { recursive: true, force: true }).catch((err: unknown) => console.error(`taskyard: cannot remove the spare run directory ${path}`, err));
  }

  /** Makes spares until `size` are ready or being made. */
  refill(): void {
    while (!this.#closed && this.#ready.length + this.#making < this.#size) {
      this.#making++;
      const path = join(this.#dir, `${process.pid}-${++this.#counter}`);
      make(path).then(
        () => (this.#closed ? this.drop(path) : this.#ready.push(path)),
        // A full disk, most likely: the next submit creates its directory itself and tries again.
        () => this.drop(path),
      ).finally(() => this.#making--);
    }
  }

  /** Makes no more spares (those ready are removed at the next start). */
  close(): void {
    this.#closed = true;
  }
}

async function make(path: string): Promise<void> {
  await mkdir(path);
  await Promise.all([TASK_FILES.status, TASK_FILES.events].map(async (name) => (await open(join(path, name), 'wx', 0o644)).close()));
}

/** The spare's `status.json`, open for writing, when the spare is still as it was made (a directory with two files). */
function openRecord(path: string): number | undefined {
  let fd: number | undefined;
  try {
    if (!lstatSync(path).isDirectory() || !lstatSync(join(path, TASK_FILES.events)).isFile()) return undefined;
    fd = openSync(join(path, TASK_FILES.status), WRITE_EXISTING);
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size === 0) return fd;
  } catch {
    // Gone or replaced: not a spare any more.
  }
  if (fd !== undefined) closeSync(fd);
  return undefined;
}
