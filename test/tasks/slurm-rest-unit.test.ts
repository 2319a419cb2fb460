import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { closedPort } from '../../harness/http-server.js';
import { validateConfig } from '../../supervisor/common/config.js';
import { tokenOf } from '../../supervisor/common/slurm-rest-config.js';
import { errorsOf } from '../../supervisor/tasks/engines/slurm-rest-api.js';
import { chooseApi } from '../../supervisor/tasks/engines/slurm-rest-versions.js';
import { SlurmRestClient } from '../../supervisor/tasks/engines/slurm-rest-client.js';
import { SlurmRestTransport } from '../../supervisor/tasks/engines/slurm-rest-transport.js';
import { V0038 } from '../../supervisor/tasks/engines/slurm-rest-v0038.js';

/**
 * The slurmrestd adapter without a cluster: `executor.rest` config errors, the v0.0.38 answers
 * and submit body, version choice, and the client against a raw socket server that answers as
 * slurmrestd 22.05 does (a stray header after the body of any request that says Connection: close).
 */

const dir = await mkdtemp(join(tmpdir(), 'taskyard-slurm-rest-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'token');
await writeFile(tokenFile, 'SLURM_JWT=abc.def.ghi\n', { mode: 0o600 });

const configError = (rest: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  try {
    validateConfig({ executor: { kind: 'slurm', rest, ...extra } }, 'service.yaml');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

t.test('executor.rest is checked with errors a person can act on, and never quotes the token', async (t) => {
  t.equal(configError({ url: 'http://127.0.0.1:6820', token_file: tokenFile }), null, 'a URL and a private token file');
  t.equal(configError({ socket: '/run/slurmrestd.sock' }), null, 'a unix socket alone (rest_auth/local)');
  t.match(configError({ url: 'http://h:1', socket: '/s', token: 'secret-token' }), /executor\.rest has both url and socket: give one/);
  t.match(configError({ token: 'x' }), /executor\.rest needs url \(http:\/\/host:port of slurmrestd\) or socket/);
  t.match(configError({ url: 'not a url' }), /executor\.rest\.url is not a URL: "not a url" \(write http:\/\/host:port\)/);
  t.match(configError({ url: 'ftp://h:1' }), /executor\.rest\.url must be http:\/\/ or https:\/\/, not ftp:/);
  t.match(configError({ url: 'http://h:1/slurm/v0.0.38' }), /without a path: write http:\/\/h:1/);
  t.match(configError({ socket: 'rel.sock' }), /executor\.rest\.socket must be an absolute path/);
  t.match(configError({ url: 'http://h:1', token_file: join(dir, 'missing') }), /executor\.rest\.token_file \S+missing cannot be read \(ENOENT\)/);
  t.match(configError({ url: 'http://h:1', token: 'secret-token', token_file: tokenFile }), /both token and token_file/);
  const open = join(dir, 'open-token');
  await writeFile(open, 'abc');
  await chmod(open, 0o644);
  t.match(configError({ url: 'http://h:1', token_file: open }), /may be read or written by other users \(mode 0644\): chmod o-rwx it/);
  const empty = join(dir, 'empty-token');
  await writeFile(empty, '\n', { mode: 0o600 });
  t.match(configError({ url: 'http://h:1', token_file: empty }), /is empty/);
  t.match(configError({ url: 'http://h:1' }, { sbatch_args: ['--qos=x'] }), /executor\.sbatch_args applies to sbatch only/);
  t.match(configError({ url: 'http://h:1' }, { kind: 'local' }), /executor\.rest applies only to executor\.kind: slurm/);
  t.match(configError({ url: 'http://h:1', port: 1 }), /rest/, 'an unknown field is named');
  t.notMatch(configError({ url: 'http://h:1', socket: '/s', token: 'secret-token' }) ?? '', /secret-token/, 'the token is not in the message');
  t.equal(tokenOf('SLURM_JWT=abc\n'), 'abc', 'scontrol token output is read as the token');
  t.equal(tokenOf('  abc  '), 'abc');
});

t.test('v0.0.38: the submit body, jobs and errors as 22.05 writes them', async (t) => {
  const body = V0038.submitBody(
    { jobName: 'T#1@r1', cwd: '/w', logFile: '/w/task.log', script: '#!/bin/sh\nexec x\n', env: { A: 'a,b c' }, resources: { cpus: 2, gpus: 1, memory_mb: 512, time_limit_s: 61 }, runId: 'r1' },
    { kind: 'slurm', sbatch_args: [], partition: 'p', account: 'a' },
  );
  t.same(body, {
    script: '#!/bin/sh\nexec x\n',
    job: { name: 'T#1@r1', current_working_directory: '/w', standard_output: '/w/task.log', standard_error: '/w/task.log', open_mode: 'append', environment: { A: 'a,b c' }, cpus_per_task: 2, gres: 'gpu:1', memory_per_node: 512, time_limit: 2, partition: 'p', account: 'a' },
  }, 'a time limit is rounded up to whole minutes; the environment keeps its commas');
  t.equal(V0038.jobIdOf({ job_id: 42, step_id: 'BATCH', errors: [] }), '42');
  t.equal(V0038.jobIdOf({ job_id: 'x' }), null);
  t.same(V0038.jobsOf({ jobs: [{ job_id: 7, job_state: 'RUNNING', state_reason: 'None', name: 'n', user_name: 'root' }, { job_id: 'bad' }, 'junk'] }), [{ id: '7', state: 'RUNNING', reason: 'None', name: 'n', user: 'root' }], 'garbled entries are skipped');
  t.same(errorsOf({ errors: [{ error_number: 2017, error: 'Invalid job id specified', description: 'Unable to find JobId=9' }, { error_code: 1800, error: 'Unable to contact slurm controller (connect failure)' }] }), [
    { number: 2017, text: 'Invalid job id specified: Unable to find JobId=9' },
    { number: 1800, text: 'Unable to contact slurm controller (connect failure)' },
  ], 'error_number and a submit\'s error_code are both read');
  t.equal(chooseApi({ paths: { '/slurm/v0.0.38/job/submit': {}, '/slurm/v0.0.37/job/submit': {} } }), V0038);
  const refused = chooseApi({ paths: { '/slurm/v0.0.40/job/submit': {}, '/slurm/v0.0.41/jobs': {} } });
  t.match((refused as Error).message, /^offers the Slurm OpenAPI v0\.0\.40, v0\.0\.41; taskyard speaks v0\.0\.38 \(load that plugin: slurmrestd -s openapi\/v0\.0\.38\)$/);
});

t.test('the client keeps its connections alive, so slurmrestd 22.05\'s Connection: close quirk is never hit', async (t) => {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n\r\n')) >= 0) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        seen.push(head);
        const body = JSON.stringify({ errors: [], job_id: seen.length });
        // As slurmrestd 22.05.8 does: a stray header line after the body when the client asked to close.
        const stray = /^connection:\s*close/im.test(head) ? 'Connection: Close\r\n' : '';
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}${stray}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  const client = new SlurmRestClient({ url: `http://127.0.0.1:${port}`, token_file: tokenFile, user: 'alice' });
  t.teardown(() => client.close());
  for (let i = 1; i <= 20; i++) t.same((await client.request('POST', '/slurm/v0.0.38/job/submit', 5000, { n: i })).body, { errors: [], job_id: i });
  t.equal(seen.length, 20);
  t.equal(seen.filter((head) => /^connection:\s*close/im.test(head)).length, 0, 'no request asks to close');
  t.ok(connections <= 2, `kept-alive connections served them in turn (${connections} for 20 requests)`);
  t.ok(seen.every((head) => /^x-slurm-user-token: abc\.def\.ghi$/im.test(head) && /^x-slurm-user-name: alice$/im.test(head)), 'the token file\'s token and the user go in headers');
});

t.test('a slurmrestd that speaks no version taskyard knows is refused, saying what it offers; nothing is submitted', async (t) => {
  const asked: string[] = [];
  const server = createHttpServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ paths: { '/slurm/v0.0.40/job/submit': {}, '/slurm/v0.0.40/jobs': {} } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => void server.close());
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const transport = new SlurmRestTransport({ url, token: 'secret-token' }, { kind: 'slurm', sbatch_args: [] });
  t.teardown(() => transport.close());
  const job = { jobName: 'a@b', cwd: '/', logFile: '/dev/null', script: '#!/bin/sh\n', env: {}, resources: {}, runId: 'b' };
  const refusal = `slurmrestd at ${url} offers the Slurm OpenAPI v0.0.40; taskyard speaks v0.0.38 (load that plugin: slurmrestd -s openapi/v0.0.38)`;
  await t.rejects(transport.submit(job), new Error(refusal));
  await t.rejects(transport.states(['1']), new Error(refusal), 'the watch says the same');
  t.same(asked, ['GET /openapi/v3'], 'the version is asked once; no submit went out');
});

t.test('a slurmrestd that is not there: the submit is tried again until sbatch_timeout_s, then fails saying so (nothing was sent)', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  const transport = new SlurmRestTransport({ url }, { kind: 'slurm', sbatch_args: [], sbatch_timeout_s: 1 });
  t.teardown(() => transport.close());
  const job = { jobName: 'a@b', cwd: '/', logFile: '/dev/null', script: '#!/bin/sh\n', env: {}, resources: {}, runId: 'b' };
  const t0 = Date.now();
  const err = (await transport.submit(job).then(
    () => new Error('the submit succeeded'),
    (e: unknown) => e,
  )) as Error;
  t.equal(err.constructor, Error, 'a plain failure, not an uncertain one: no lookup by name follows');
  t.match(err.message, new RegExp(`^no Slurm controller took the job within 1 s: slurmrestd at ${url.replaceAll('.', '\\.')} did not answer GET /openapi/v3 \\(ECONNREFUSED\\)$`));
  t.ok(Date.now() - t0 >= 1000, 'it kept trying for the whole bound');
});
