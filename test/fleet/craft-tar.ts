import { gzipSync } from 'node:zlib';
import { Header } from 'tar';

/** One raw archive member; `size` may claim more than `body` holds (oversize headers). */
export interface RawMember {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'FIFO';
  body?: string | Buffer;
  linkpath?: string;
  size?: number;
}

/**
 * Builds a `.tar.gz` byte for byte from headers, so tests can make archives no tar tool would
 * write from a real directory: `..` names, absolute names, links, duplicates, lying sizes.
 */
export function craftTarGz(members: readonly RawMember[], { truncate = false } = {}): Buffer {
  const blocks: Buffer[] = [];
  for (const m of members) {
    const type = m.type ?? (m.path.endsWith('/') ? 'Directory' : 'File');
    const body = m.body === undefined ? Buffer.alloc(0) : Buffer.from(m.body);
    const header = new Header({ path: m.path, type, mode: type === 'Directory' ? 0o755 : 0o644, size: m.size ?? (type === 'File' ? body.length : 0), mtime: new Date(0), ...(m.linkpath ? { linkpath: m.linkpath } : {}) });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (body.length) blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  if (!truncate) blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/** A terminal TaskStatus document for `id` (type and registration taken from the ID). */
export function statusJson(id: string, state = 'succeeded'): string {
  const [type, registration] = id.split('#') as [string, string];
  return JSON.stringify({
    task_id: id,
    run_id: 'run0123456789',
    task_type: type,
    task_name: registration,
    config: {},
    state,
    pid: null,
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: state === 'running' ? null : '2026-01-01T00:00:01.000Z',
    steps: [],
    result: {},
    error: '',
    exit_code: 0,
    log_path: `${type}/${id}/task.log`,
  });
}
