import { HttpError } from '../core/errors.js';
import type { HeaderMap, IncomingRequest, ResponseSink } from './http.js';
import type { Route } from './route.js';
import type { Bundle, BundleFile } from './static-bundle.js';

/**
 * The page only talks to its own origin and runs only its own bundled script, so a Markdown file
 * from the workspace cannot run code even if it slipped past the sanitiser. Images fetched from
 * `/files` are shown as `blob:` URLs of this origin (in `<img>`, where an svg runs no script).
 */
const SECURITY_HEADERS: Readonly<HeaderMap> = Object.freeze({
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
});

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>taskyard</title>
<p>The web console is not built. Run <code>npm run build</code> and restart the service.</p>`;

/** `/` and `/index.html` are the page; any other path must name a file of the bundle exactly. */
function lookup(bundle: Bundle, path: string): BundleFile | undefined {
  return bundle.get(path === '/' ? '/index.html' : path);
}

function acceptsGzip(headers: Readonly<Record<string, string>>): boolean {
  return /\bgzip\b/.test(headers['accept-encoding'] ?? '');
}

/** True when one of the client's validators names the current entity tag. */
function notModified(file: BundleFile, headers: Readonly<Record<string, string>>): boolean {
  const tags = headers['if-none-match'];
  return tags !== undefined && tags.split(',').some((t) => t.trim().replace(/^W\//, '') === file.etag);
}

function sendFile(req: IncomingRequest, res: ResponseSink, file: BundleFile): void {
  const headers: HeaderMap = {
    ...SECURITY_HEADERS,
    'content-type': file.contentType,
    etag: file.etag,
    // Hashed assets never change under their name; the page itself is revalidated on every load
    // so a rebuilt service is picked up at once.
    'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    vary: 'accept-encoding',
  };
  if (notModified(file, req.headers)) return res.send(304, headers);
  const gzip = file.gzip !== null && acceptsGzip(req.headers);
  if (gzip) headers['content-encoding'] = 'gzip';
  const body = gzip ? file.gzip! : file.body;
  // HEAD: same headers, no body; the adapters derive content-length from the body they send.
  res.send(200, headers, req.method === 'HEAD' ? '' : body);
}

/**
 * The console's catch-all route (prefix `/`, tried last by the front door). It sits outside the
 * bearer check (spec, Authentication 3): the page asks for the token itself. `load` answers the
 * built console (null when there is none); it is asked on each request and may keep what it read.
 */
export function createStaticRoute(load: () => Promise<Bundle | null>): Route {
  return {
    prefix: '/',
    async handle(req: IncomingRequest, res: ResponseSink): Promise<void> {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'Method not allowed; use GET');
      const bundle = await load();
      if (bundle === null) {
        if (req.path !== '/' && req.path !== '/index.html') throw new HttpError(404, 'Not found');
        return res.send(503, { ...SECURITY_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, NOT_BUILT);
      }
      const file = lookup(bundle, req.path);
      if (!file) throw new HttpError(404, 'Not found');
      sendFile(req, res, file);
    },
  };
}
