import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startAgentService } from './agent-helpers.js';
import { waitFor } from '../helpers/service.js';
import type { AuditRecord } from '../../core/audit.js';

const CHAT = 'chat-token-0123456789abcdef';

t.test('an Agent turn started with a scoped token gets only the tools that token may call, audited as its agent calls', async (t) => {
  const tokens = [{ name: 'chat', token: CHAT, jobs: ['agent_chat', 'version'] }];
  const { service, model } = await startAgentService(t, { tools: ['version', 'shell'] }, { config: { service: { tokens } } });
  const dir = await mkdtemp(join(tmpdir(), 'taskyard-agent-scope-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const marker = join(dir, 'ran');
  model.reply({ items: [{ tool: 'version', input: {} }, { tool: 'shell', input: { command: `touch ${marker}` } }] }, { items: [{ text: 'Done.' }] });
  const res = await fetch(`${service.url}/jobs/agent_chat`, { method: 'POST', headers: { authorization: `Bearer ${CHAT}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { message: 'Run things' } }) });
  t.equal(res.status, 200);
  await res.arrayBuffer();
  const offered = (model.requests[0]!.body['tools'] as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
  t.same(offered, ['version'], 'the model is offered only the tools within the token\'s scope');
  t.notOk(existsSync(marker), 'shell never ran on the agent\'s behalf');

  const records = await waitFor(async () => {
    const text = await readFile(join(service.workspace, '.taskyard', 'audit.jsonl'), 'utf8').catch(() => '');
    const parsed = text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as AuditRecord);
    return parsed.some((r) => r.job === 'agent_chat') ? parsed : null;
  }, 10_000, 'the audit log');
  t.same(
    records.map(({ token, transport, job, outcome }) => `${token} ${transport} ${job} ${outcome}`),
    ['chat agent version ok', 'chat http agent_chat ok'],
    'the tool call is the token\'s, made by its agent',
  );

  model.reply({ items: [{ text: 'Hi.' }] });
  await service.call('agent_chat', { message: 'And you?' });
  const all = (model.requests.at(-1)!.body['tools'] as Array<{ function: { name: string } }>).map((tool) => tool.function.name);
  t.same(all.sort(), ['shell', 'version'], 'the service token\'s turns keep every configured tool');
});
