// Runs on every HTTP front end.
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { startTestService, TEST_TOKEN, type TestService } from '../helpers/service.js';

interface Answer {
  status: number;
  body: string;
}

/** node:http, not fetch: fetch does not let a caller set Host or send a body type of its choice unchanged. */
function send(svc: TestService, method: string, path: string, headers: Record<string, string>, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const auth = svc.token ? { authorization: `Bearer ${svc.token}` } : {};
    const req = request(new URL(path, svc.url), { method, headers: { ...auth, 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
/** A shell call that leaves a file behind when it runs. */
const shellCall = (marker: string) => JSON.stringify({ arguments: { command: `id > ${marker}` } });

// `shell` is public without a token only with requires_auth=false: the case the issue found. One
// service per mode serves all its tests (each command leaves a marker file of its own name).
const serviceFor = (token: string | null) =>
  startTestService(t, { token, config: { service: { allowed_origins: ['https://lab.example.org'] }, jobs: { shell: { requires_auth: false } } } });
const tokenMode = await serviceFor(TEST_TOKEN);
const openMode = await serviceFor(null);

for (const svc of [tokenMode, openMode]) {
  const mode = svc.token ? 'token mode' : 'open mode';

  t.test(`${mode}: another site's Origin or a foreign Host gets 403 on every route, and nothing runs`, async (t) => {
    const port = new URL(svc.url).port;
    const ran = (name: string) => existsSync(join(svc.workspace, name));
    const rebound = `evil.example.com:${port}`;
    for (const [what, headers, problem] of [
      ['foreign Origin', { origin: 'http://evil.example.com' }, 'Origin not allowed: http://evil.example.com'],
      ['Origin null', { origin: 'null' }, 'Origin not allowed: null'],
      ['foreign Host', { host: rebound }, `Host not allowed: ${rebound}`],
      ['same-origin page of a rebound name', { host: rebound, origin: `http://${rebound}` }, `Host not allowed: ${rebound}`],
    ] as const) {
      const call = await send(svc, 'POST', '/jobs/shell', { ...JSON_TYPE, ...headers }, shellCall('called'));
      t.same([call.status, JSON.parse(call.body)], [403, { detail: problem }], `${what}: POST /jobs/shell`);
      t.equal((await send(svc, 'POST', '/jobs/shell/events', { ...JSON_TYPE, ...headers }, shellCall('streamed'))).status, 403, `${what}: POST /jobs/shell/events`);
      t.equal((await send(svc, 'GET', '/files?path=kept.txt', headers)).status, 403, `${what}: GET /files`);
      t.equal((await send(svc, 'POST', '/files', { 'x-file-name': 'up.txt', ...headers }, 'uploaded')).status, 403, `${what}: POST /files`);
      t.equal((await send(svc, 'GET', '/jobs', headers)).status, 403, `${what}: GET /jobs`);
      t.equal((await send(svc, 'GET', '/', headers)).status, 403, `${what}: the console`);
      t.equal((await send(svc, 'OPTIONS', '/jobs/shell', headers)).status, 403, `${what}: a preflight`);
    }
    t.notOk(ran('called') || ran('streamed'), 'no shell command ran');
    t.notOk(existsSync(join(svc.workspace, 'tmp')), 'nothing was staged');
  });

  t.test(`${mode}: loopback Origins, the service's own, allowed_origins and no Origin keep working`, async (t) => {
    const port = new URL(svc.url).port;
    for (const [i, headers] of [
      {},
      { origin: `http://127.0.0.1:${port}` },
      { origin: `http://localhost:${port}`, host: `localhost:${port}` },
      { origin: 'https://lab.example.org' },
    ].entries()) {
      const call = await send(svc, 'POST', '/jobs/shell', { ...JSON_TYPE, ...headers }, shellCall(`ok-${i}`));
      t.same([call.status, (JSON.parse(call.body) as { success: boolean }).success], [200, true], `${JSON.stringify(headers)}: the Job runs`);
      t.ok(existsSync(join(svc.workspace, `ok-${i}`)), 'and its command ran');
      t.equal((await send(svc, 'GET', `/files?path=ok-${i}`, headers)).status, 200, `${JSON.stringify(headers)}: GET /files`);
    }
  });
}

t.test('open mode: a Job call in a body type a form or a simple request can send is refused and runs nothing', async (t) => {
  const svc = openMode;
  for (const [i, type] of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined].entries()) {
    const headers = type === undefined ? {} : { 'content-type': type };
    for (const path of ['/jobs/shell', '/jobs/shell/events']) {
      const call = await send(svc, 'POST', path, headers, shellCall(`form-${i}`));
      t.equal(call.status, 415, `${type ?? 'no Content-Type'} to ${path}: 415`);
      t.match(JSON.parse(call.body), { detail: /Content-Type application\/json/ });
    }
    t.notOk(existsSync(join(svc.workspace, `form-${i}`)), `${type ?? 'no Content-Type'}: the command did not run`);
  }
  const json = await send(svc, 'POST', '/jobs/shell', { 'content-type': 'application/json; charset=utf-8' }, shellCall('json'));
  t.equal(json.status, 200, 'application/json runs');
  t.ok(existsSync(join(svc.workspace, 'json')));
});

t.test('token mode: a Job call with the token may send any body type (no page of another site has the token)', async (t) => {
  const call = await send(tokenMode, 'POST', '/jobs/version', { 'content-type': 'text/plain' }, JSON.stringify({ arguments: {} }));
  t.equal(call.status, 200);
});
