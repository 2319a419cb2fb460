import { request } from 'node:http';
import t from 'tap';
import { ensureConsoleBuilt } from '../helpers/browser.js';
import { startTestService } from '../helpers/service.js';

/** A raw GET that keeps the path exactly as written (fetch would normalise `..` away). */
function rawGet(url: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

t.before(ensureConsoleBuilt);

t.test('the page and its assets are served without a token, with types and caching headers', async (t) => {
  const svc = await startTestService(t);
  const page = await rawGet(svc.url, '/');
  t.equal(page.status, 200, 'the console is outside the bearer check');
  t.match(page.headers['content-type'], /^text\/html; charset=utf-8/);
  t.equal(page.headers['cache-control'], 'no-cache', 'the page is revalidated so a rebuilt service is picked up');
  t.match(page.headers['content-security-policy'], /script-src 'self'/);
  t.equal(page.headers['x-content-type-options'], 'nosniff');
  const html = page.body.toString();
  const script = /src="(\/assets\/app-[A-Z0-9]{8}\.js)"/.exec(html)?.[1];
  const style = /href="(\/assets\/app-[A-Z0-9]{8}\.css)"/.exec(html)?.[1];
  t.ok(script && style, 'index.html names the hashed script and stylesheet');

  const js = await rawGet(svc.url, script!, { 'accept-encoding': 'gzip, br' });
  t.equal(js.status, 200);
  t.match(js.headers['content-type'], /^text\/javascript/);
  t.match(js.headers['cache-control'], /immutable/, 'hashed assets are cached for good');
  t.equal(js.headers['content-encoding'], 'gzip', 'text assets go out compressed when the client accepts it');
  const css = await rawGet(svc.url, style!);
  t.match(css.headers['content-type'], /^text\/css/);
  t.equal(css.headers['content-encoding'], undefined, 'no compression without accept-encoding');
  t.match(css.body.toString(), /--accent/);
  const icon = await rawGet(svc.url, '/favicon.svg');
  t.equal(icon.headers['content-type'], 'image/svg+xml');

  const again = await rawGet(svc.url, script!, { 'if-none-match': String(js.headers['etag']) });
  t.equal(again.status, 304, 'a matching entity tag answers 304');
  t.equal(again.body.length, 0);
  const head = await rawGet(svc.url, '/index.html', {}, 'HEAD');
  t.equal(head.status, 200);
  t.equal(head.body.length, 0, 'HEAD has no body');
});

t.test('only files of the built bundle are served: no escapes, no sources, no maps', async (t) => {
  const svc = await startTestService(t);
  for (const path of [
    '/../package.json',
    '/%2e%2e/package.json',
    '/assets/../../package.json',
    '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    '/..%2f..%2fpackage.json',
    '/web/src/main.ts',
    '/web/build.mjs',
    '/dist/web/index.html',
    '/assets/',
    '/etc/passwd',
    '//etc/passwd',
    '/index.html%00.js',
  ]) {
    const res = await rawGet(svc.url, path);
    t.ok(res.status === 404 || res.status === 400, `${path} is refused (${res.status})`);
    t.notMatch(res.body.toString(), /"name": "taskyard"|root:x:0/, `${path} leaks nothing`);
  }
  const html = (await rawGet(svc.url, '/')).body.toString();
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
  t.equal((await rawGet(svc.url, `${script}.map`)).status, 404, 'source maps stay on disk');
  const post = await svc.fetch('/', { method: 'POST', body: 'x' });
  t.equal(post.status, 405);
  t.same(await post.json(), { detail: 'Method not allowed; use GET' });
});

t.test('protected paths keep their bearer check next to the catch-all console route', async (t) => {
  const svc = await startTestService(t);
  const res = await rawGet(svc.url, '/jobs');
  t.equal(res.status, 401);
  t.same(JSON.parse(res.body.toString()), { detail: 'Invalid bearer token' });
  t.equal((await rawGet(svc.url, '/jobs/nope/extra/path', { authorization: `Bearer ${svc.token}` })).status, 404);
});
