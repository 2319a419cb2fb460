// The CLI over https (a service behind a TLS-terminating proxy): its own HTTP client speaks TLS,
// checks the certificate, and says why it could not connect when the certificate is not trusted.
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { runCli, type CliRun } from '../helpers/run-cli.js';
import { startTestService } from '../helpers/service.js';

const home = await mkdtemp(join(tmpdir(), 'taskyard-cli-https-'));
t.teardown(() => rm(home, { recursive: true, force: true }));
const svc = await startTestService(t);

// A self-signed certificate for 127.0.0.1, made for this run only.
const cert = join(home, 'cert.pem');
const key = join(home, 'key.pem');
await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
  '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert]);

// The proxy: TLS outside, the real service's plain HTTP inside, bodies streamed both ways.
const target = new URL(svc.url);
const proxy = createServer({ cert: await readFile(cert), key: await readFile(key) }, (req, res) => {
  const inner = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  inner.on('error', () => res.destroy());
  req.pipe(inner);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
const url = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(args, { HOME: home, TASKYARD_URL: url, TASKYARD_TOKEN: svc.token ?? '', NODE_EXTRA_CA_CERTS: cert, ...env });
}

t.test('an https service: a call, a streamed call and a 401 go through TLS', async (t) => {
  const version = await cli(['version']);
  t.equal(version.code, 0, version.stderr);
  t.match(JSON.parse(version.stdout), { success: true });

  const streamed = await cli(['shell', '--command', 'echo hi', '--stream', '--output', 'text']);
  t.equal(streamed.code, 0, streamed.stderr);
  t.equal(streamed.stdout, 'hi\n[exit code 0]\n');

  const refused = await cli(['version'], { TASKYARD_TOKEN: 'wrong' });
  t.equal(refused.code, 1);
  t.match(refused.stderr, 'HTTP 401: Invalid bearer token\nThe token sent came from TASKYARD_TOKEN.');
});

t.test('an untrusted certificate: the CLI says it cannot reach the address, and why', async (t) => {
  const run = await cli(['version'], { NODE_EXTRA_CA_CERTS: '' });
  t.equal(run.code, 1);
  t.match(run.stderr, `cannot reach ${url}: DEPTH_ZERO_SELF_SIGNED_CERT`);
});
