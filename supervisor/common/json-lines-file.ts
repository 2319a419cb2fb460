import { constants } from 'node:fs';
import { mkdir, open, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Lines held while the disk is slow; past this the oldest are dropped and the drop is logged. */
const MAX_PENDING = 65_536;
const FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/**
 * An append-only file of JSON lines (the audit log, the Tasks' submitters). `append` only pushes
 * the line; the lines of a turn of the event loop go out in one write after it, so a call that
 * appends pays no I/O. Past `maxBytes` the file is renamed to `<path>.1` (`.1` to `.2`, ... up to
 * `keep`) and a new one begun. Opened without following links, mode 0600.
 */
export class JsonLinesFile {
  #pending: object[] = [];
  #dropped = 0;
  #scheduled = false;
  #writing: Promise<void> = Promise.resolve();
  #handle: FileHandle | null = null;
  #size = 0;
  #failed = false;

  private constructor(
    readonly path: string,
    private readonly maxBytes: number,
    private readonly keep: number,
  ) {}

  static async open(path: string, maxBytes = Infinity, keep = 0): Promise<JsonLinesFile> {
    const log = new JsonLinesFile(path, maxBytes, keep);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await log.#reopen();
    return log;
  }

  /** Takes one record (e.g. the registry's AuditSink): never waits, never throws. */
  readonly append = (record: object): void => {
    if (this.#pending.length >= MAX_PENDING) {
      this.#pending.shift();
      this.#dropped++;
    }
    // Serialized when written, after the call has been answered.
    this.#pending.push(record);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#writing = this.#writing.then(() => this.#flush());
    });
  };

  /** Writes what is pending, then closes the file. */
  async close(): Promise<void> {
    this.#writing = this.#writing.then(() => this.#flush());
    await this.#writing;
    await this.#handle?.close();
    this.#handle = null;
  }

  async #reopen(): Promise<void> {
    await this.#handle?.close();
    this.#handle = await open(this.path, FLAGS, 0o600);
    this.#size = (await this.#handle.stat()).size;
  }

  async #rotate(): Promise<void> {
    await this.#handle?.close();
    this.#handle = null;
    if (this.keep === 0) await rm(this.path, { force: true });
    for (let i = this.keep - 1; i >= 1; i--) await rename(`${this.path}.${i}`, `${this.path}.${i + 1}`).catch(() => undefined);
    if (this.keep > 0) await rename(this.path, `${this.path}.1`);
    await this.#reopen();
  }

  async #flush(): Promise<void> {
    if (this.#pending.length === 0 || !this.#handle) return;
    const lines = this.#pending.map((record) => JSON.stringify(record));
    this.#pending = [];
    if (this.#dropped > 0) {
      lines.unshift(JSON.stringify({ time: new Date().toISOString(), dropped: this.#dropped }));
      this.#dropped = 0;
    }
    try {
      // As few writes as the size limit allows: lines gather until the next would pass it.
      let chunk = '';
      let bytes = 0;
      for (const line of lines) {
        const size = Buffer.byteLength(line) + 1;
        if (this.#size + bytes + size > this.maxBytes && this.#size + bytes > 0) {
          await this.#write(chunk, bytes);
          await this.#rotate();
          chunk = '';
          bytes = 0;
        }
        chunk += `${line}\n`;
        bytes += size;
      }
      await this.#write(chunk, bytes);
      this.#failed = false;
    } catch (err) {
      // A full disk or a removed directory must not stop the service; say so once per outage.
      if (!this.#failed) console.error(`taskyard: cannot write ${this.path}: ${(err as Error).message}`);
      this.#failed = true;
      if (!this.#handle) await this.#reopen().catch(() => undefined);
    }
  }

  async #write(text: string, bytes: number): Promise<void> {
    if (bytes === 0) return;
    await this.#handle!.write(text);
    this.#size += bytes;
  }
}
