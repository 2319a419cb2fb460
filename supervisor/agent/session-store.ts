import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { KeyError, RuntimeError } from '../../core/errors.js';
import { SerialQueue } from '../../core/serial-queue.js';
import { AgentSessionInfo, type SessionRecord } from '../../schemas/agent.js';
import { check } from '../../schemas/validator.js';
import { readJsonObject } from '../common/json-file.js';
import { readRegularFile } from '../../workers/safe-file.js';
import { writeJsonAtomic } from '../../core/task-record/record-files.js';

const MIB = 1024 * 1024;

/** Whether a file's last byte is not a newline: its last line was torn by a crash mid-append. */
async function endsMidLine(file: string): Promise<boolean> {
  const handle = await open(file, 'r').catch(() => null);
  if (!handle) return false;
  try {
    const { size } = await handle.stat();
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await handle.read(last, 0, 1, size - 1);
    return last[0] !== 0x0a;
  } finally {
    await handle.close();
  }
}

/**
 * One line of `messages.jsonl`, or null when it is unreadable. A line an older version wrote
 * straight onto a torn tail starts with the torn piece: the whole record after it is kept.
 */
function parseRecord(line: string): SessionRecord | null {
  // A few tries at most: a line of many record-like pieces must not cost quadratic time.
  for (let at = 0, tries = 0; at !== -1 && tries < 8; at = line.indexOf('{"id":', at + 1), tries++) {
    try {
      return JSON.parse(line.slice(at)) as SessionRecord;
    } catch {
      // Torn at the front: try from the next record start.
    }
  }
  return null;
}

/** A fresh id for a session, turn or message: sortable enough to read, unique by its random part. */
export function newId(prefix: string): string {
  return `${prefix}-${randomUUID().replaceAll('-', '').slice(0, 20)}`;
}

const TITLE_CHARS = 60;
/** The most a session's `messages.jsonl` may hold before a turn is refused (bytes). */
export const SESSION_SIZE_LIMIT = 32 * 1024 * 1024;

/**
 * Agent sessions on disk, in the service's private directory: one folder per session holding
 * `info.json` (replaced atomically) and `messages.jsonl` (append-only). Updates of one session's
 * info are chained, so a rename during a turn cannot lose the turn's count or the new title.
 */
export class SessionStore {
  readonly #root: string;
  readonly #chains = new SerialQueue();

  constructor(workspace: string) {
    this.#root = join(workspace, '.taskyard', 'agent');
  }

  #dir(id: string): string {
    return join(this.#root, id);
  }

  /** The info of a session, or a KeyError naming it. */
  async info(id: string): Promise<AgentSessionInfo> {
    const parsed = check(AgentSessionInfo, await readJsonObject(join(this.#dir(id), 'info.json')));
    if (!parsed.ok) throw new KeyError(`no agent session ${id} (list_agent_sessions shows the existing ones)`);
    return parsed.value;
  }

  async create(title: string, forkedFrom: string | null = null): Promise<AgentSessionInfo> {
    const id = newId('s');
    const now = new Date().toISOString();
    const info: AgentSessionInfo = { session_id: id, title: title.slice(0, TITLE_CHARS), tag: null, created_at: now, updated_at: now, message_count: 0, forked_from: forkedFrom };
    await mkdir(this.#dir(id), { recursive: true, mode: 0o700 });
    await writeJsonAtomic(join(this.#dir(id), 'info.json'), info);
    return info;
  }

  /** Every session, newest activity first. */
  async list(): Promise<AgentSessionInfo[]> {
    const names = await readdir(this.#root).catch(() => [] as string[]);
    const infos = await Promise.all(names.map((n) => this.info(n).catch(() => null)));
    return infos.filter((i): i is AgentSessionInfo => i !== null).sort((a, b) => b.updated_at.localeCompare(a.updated_at) || b.session_id.localeCompare(a.session_id));
  }

  /** Changes a session's info under its chain; answers the new info. */
  update(id: string, change: (info: AgentSessionInfo) => Partial<AgentSessionInfo>): Promise<AgentSessionInfo> {
    return this.#chains.run(id, async () => {
      const info = await this.info(id);
      const updated = { ...info, ...change(info), updated_at: new Date().toISOString() };
      await writeJsonAtomic(join(this.#dir(id), 'info.json'), updated);
      return updated;
    });
  }

  /**
   * Appends records (one JSON line each) and counts the messages among them. A torn last line (a
   * crash or a full disk mid-append) is closed first, so the new records start on a line of their
   * own: the torn line stays unreadable, and takes nothing with it.
   */
  async append(id: string, records: readonly SessionRecord[]): Promise<AgentSessionInfo> {
    if (records.length === 0) return this.info(id);
    const file = join(this.#dir(id), 'messages.jsonl');
    const lines = records.map((r) => `${JSON.stringify(r)}\n`).join('');
    await appendFile(file, (await endsMidLine(file)) ? `\n${lines}` : lines, { mode: 0o600 });
    const added = records.filter((r) => r.message).length;
    return this.update(id, (info) => ({ message_count: info.message_count + added }));
  }

  /** Every record of a session in order; a torn line (a crash mid-append) is skipped. */
  async records(id: string): Promise<SessionRecord[]> {
    await this.info(id);
    const text = await readRegularFile(join(this.#dir(id), 'messages.jsonl')).then((b) => b.toString('utf8'), () => '');
    const out: SessionRecord[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      const record = parseRecord(line);
      if (record) out.push(record);
    }
    return out;
  }

  /**
   * Refuses a turn on a session that holds SESSION_SIZE_LIMIT or more: every turn sends the
   * whole history to the model and every read loads it, so a session must not grow without end.
   */
  async checkRoom(id: string): Promise<void> {
    const size = await stat(join(this.#dir(id), 'messages.jsonl')).then((s) => s.size, () => 0);
    if (size < SESSION_SIZE_LIMIT) return;
    throw new RuntimeError(
      `session ${id} holds ${(size / MIB).toFixed(1)} MiB of messages, the most a session may hold (${SESSION_SIZE_LIMIT / MIB} MiB): ` +
        'fork it at an earlier message (fork_agent_session) or start a new session',
    );
  }

  /** A new session holding a copy of `id`'s records, up to and including one message if given. */
  async fork(id: string, upTo: string | undefined, title: string | undefined): Promise<AgentSessionInfo> {
    const source = await this.info(id);
    let records = await this.records(id);
    if (upTo !== undefined) {
      let at = records.findIndex((r) => r.id === upTo && r.message);
      if (at === -1) throw new KeyError(`session ${id} has no message ${upTo} (get_agent_session lists message ids)`);
      // A model rejects tool calls without their results: a cut after a call keeps its results.
      while (records[at + 1]?.message?.role === 'tool') at++;
      records = records.slice(0, at + 1);
    }
    const fork = await this.create(title ?? `${source.title} (fork)`, id);
    return this.append(fork.session_id, records);
  }

  async delete(id: string): Promise<void> {
    await this.info(id);
    await rm(this.#dir(id), { recursive: true, force: true });
  }
}
