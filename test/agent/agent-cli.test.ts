import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runCli, type CliRun } from '../helpers/run-cli.js';
import { startAgentService } from './agent-helpers.js';

const home = await mkdtemp(join(tmpdir(), 'taskyard-cli-home-'));
t.teardown(() => rm(home, { recursive: true, force: true }));
const { service, model } = await startAgentService(t);

function cli(args: string[]): Promise<CliRun> {
  return runCli(args, { HOME: home, TASKYARD_URL: service.url, TASKYARD_TOKEN: service.token ?? '' });
}

t.test('taskyard chat prints the streamed answer, the Jobs called, and the session to go on with', async (t) => {
  model.reply({ items: [{ reasoning: 'hidden thoughts' }, { tool: 'version', input: {} }] }, { items: [{ text: 'The service runs.' }] });
  const first = await cli(['chat', 'Is it up?']);
  t.equal(first.code, 0, first.stderr);
  t.equal(first.stdout, 'The service runs.\n');
  t.notMatch(first.stdout + first.stderr, /hidden thoughts/, 'thinking is not printed');
  t.match(first.stderr, /\[job\] version \{\} → ok/);
  const session = /session: (s-\w+)/.exec(first.stderr)?.[1];
  t.ok(session);

  model.reply({ items: [{ text: 'Still here.' }] });
  const again = await cli(['chat', 'And now?', '--session', session!]);
  t.equal(again.code, 0);
  t.equal(again.stdout, 'Still here.\n');
  t.equal((model.requests.at(-1)!.body['messages'] as unknown[]).length, 6, 'the same session went on (system, 2 turns, tool messages)');

  model.reply({ status: 401 });
  const refused = await cli(['chat', 'Hm', `--session=${session!}`]);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /\[error\] .*refused the request \(HTTP 401\)/);

  const usage = await cli(['chat']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, 'give the message to send');
  t.equal((await cli(['chat', 'x', '--session'])).code, 2);
});
