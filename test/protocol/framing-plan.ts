import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { chooseAdapter } from '../../protocol/adapter.js';
import type { BodyWriter, Handler } from '../../protocol/http.js';
import { sharedWriterOf } from '../../protocol/shared-body-writer.js';

/**
 * The answers test/protocol/stream-framing.test.ts asks for: plans of chunks, rebuilt from a
 * seed on both sides. Run as a script, it serves them from a process of its own on the front end
 * TASKYARD_HTTP_ADAPTER names (prints the port, stops when its stdin closes): a server in a test
 * process writes slower (tap's async hooks) than the service does, too slow to load the socket
 * the way a listing did.
 */

const SIZES = [0, 1, 2, 16383, 16384, 16385, 48 << 10, (48 << 10) + 1, 1 << 20];

/** A small deterministic generator (mulberry32), so the client can rebuild what the server sent. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface Piece {
  readonly text: string;
  readonly asBytes: boolean;
  readonly shared: boolean;
}

const LEAD = 'event: ';

/** The chunks of answer `seed` (about `total` bytes); with a lead, every piece starts with it. */
export function plan(seed: number, total: number, kind: string): Piece[] {
  const next = random(seed);
  const pieces: Piece[] = [];
  let sum = 0;
  let n = 0;
  while (sum < total) {
    const awkward = next() < 0.7 ? SIZES[Math.floor(next() * SIZES.length)]! : Math.floor(next() * 70_000);
    const size = kind === 'turns' ? (48 << 10) - 8 : awkward;
    const letter = String.fromCharCode(97 + (n++ % 26));
    const body = letter.repeat(size) + String(n).padStart(8, '0');
    const text = kind === 'lead' ? LEAD + body : body;
    pieces.push({ text, asBytes: kind !== 'turns' && next() < 0.5, shared: kind !== 'turns' && next() < 0.3 });
    sum += text.length;
  }
  return pieces;
}

async function writePiece(out: BodyWriter, piece: Piece): Promise<boolean> {
  const chunk = piece.asBytes || piece.shared ? Buffer.from(piece.text, 'latin1') : piece.text;
  const shared = piece.shared ? sharedWriterOf(out) : undefined;
  if (shared && typeof chunk !== 'string') return shared.writeShared(chunk);
  return out.write(chunk);
}

/**
 * `/<seed>/<total>/<kind>`: streams that plan; "lead" with a lead, "turns" as 48 KB strings with a
 * turn of the event loop between them (as a listing does), "burst" as 48 KB strings back to back,
 * "send" as one complete answer.
 */
/** Chunk `i` of a burst: 48 KiB, made as it is written (as a listing makes its chunks). */
function burstChunk(i: number): string {
  return String.fromCharCode(97 + (i % 26)).repeat((48 << 10) - 8) + String(i).padStart(8, '0');
}

/** 48 KiB strings written back to back, each as soon as the socket took the one before. */
async function burst(out: BodyWriter, total: number): Promise<void> {
  for (let i = 0; i * (48 << 10) < total; i++) if (!(await out.write(burstChunk(i)))) return;
  out.end();
}

export const handler: Handler = async (req, res) => {
  const [, seed, total, kind] = req.path.split('/');
  if (kind === 'burst') return burst(res.stream(200, { 'content-type': 'text/plain' }), Number(total));
  const lead = kind === 'lead';
  const pieces = plan(Number(seed), Number(total), kind!);
  if (kind === 'send') {
    const body = pieces.map((p) => p.text).join('');
    return res.send(200, { 'content-type': 'text/plain' }, Number(seed) % 2 ? Buffer.from(body, 'latin1') : body);
  }
  const out = res.stream(200, { 'content-type': 'text/plain' }, lead ? { lead: LEAD } : {});
  const last = lead ? pieces.pop()! : undefined;
  const progress = { pieces: pieces.length, written: 0, ended: false };
  served.set(req.path, progress);
  for (const piece of pieces) {
    if (!(await writePiece(out, piece))) return;
    progress.written++;
    if (kind === 'turns') await nextTurn();
  }
  out.end(last?.text);
  progress.ended = true;
};

/** What the handler did per path, to tell a lost byte from a stalled writer when a read fails. */
export const served = new Map<string, { pieces: number; written: number; ended: boolean }>();

export function expected(path: string): string {
  const [, seed, total, kind] = path.split('/');
  if (kind === 'burst') return Array.from({ length: Math.ceil(Number(total) / (48 << 10)) }, (_, i) => burstChunk(i)).join('');
  return plan(Number(seed), Number(total), kind!)
    .map((p) => p.text)
    .join('');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await chooseAdapter().listen('127.0.0.1', 0, handler);
  process.stdout.write(`${server.port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void server.close());
}
