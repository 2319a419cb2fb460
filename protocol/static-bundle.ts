import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** One file of the built console, held in memory with what its response needs. */
export interface BundleFile {
  readonly body: Buffer;
  /** Pre-compressed body, only when it is worth sending (text types, smaller by a margin). */
  readonly gzip: Buffer | null;
  readonly contentType: string;
  readonly etag: string;
  /** Content-hashed asset names may be cached forever; everything else is revalidated. */
  readonly immutable: boolean;
}

/** URL path (`/index.html`, `/assets/app-XYZ.js`) to file. Only these paths are ever served. */
export type Bundle = ReadonlyMap<string, BundleFile>;

const CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
});

/** esbuild names hashed outputs `name-HASH.ext` (8 upper-case base32 characters). */
const HASHED = /-[A-Z0-9]{8}\.[a-z0-9]+$/;

/** Where `npm run build` writes the console: `dist/web`, beside the compiled `dist/protocol`. */
export const DEFAULT_BUNDLE_DIR = fileURLToPath(new URL('../web/', import.meta.url));

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/**
 * Reads the whole built console into memory once. The bundle is a few hundred KiB, and serving
 * from a fixed map means no request path ever reaches the file system: nothing can escape it.
 * Source maps stay on disk (they are for developers, not for the page).
 */
export async function loadBundle(dir: string = DEFAULT_BUNDLE_DIR): Promise<Bundle | null> {
  let files: string[];
  try {
    files = await listFiles(dir);
  } catch {
    return null;
  }
  const bundle = new Map<string, BundleFile>();
  for (const file of files) {
    const type = CONTENT_TYPES[extname(file)];
    if (!type) continue;
    const body = await readFile(file);
    const compressed = type.startsWith('text/') || type === 'image/svg+xml' ? gzipSync(body, { level: 9 }) : null;
    const urlPath = `/${relative(dir, file).split(sep).join('/')}`;
    bundle.set(urlPath, {
      body,
      gzip: compressed && compressed.byteLength < body.byteLength * 0.9 ? compressed : null,
      contentType: type,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      immutable: HASHED.test(urlPath),
    });
  }
  return bundle.has('/index.html') ? bundle : null;
}
