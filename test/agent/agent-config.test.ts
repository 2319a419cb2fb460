import t from 'tap';
import { validateConfig } from '../../supervisor/config.js';
import { DEFAULT_AGENT_TOOLS } from '../../schemas/config.js';

t.test('the agent section: defaults filled, bad fields named', async (t) => {
  const config = validateConfig({ agent: { backend: 'openai', base_url: 'http://127.0.0.1:8000/v1', model: 'm' } }, 'test');
  t.match(config.agent, { max_steps: 16, max_retries: 2, tools: [...DEFAULT_AGENT_TOOLS] });
  t.notOk(config.agent?.tools.includes('shell') || config.agent?.tools.includes('submit') || config.agent?.tools.includes('cancel'), 'the default tools only read');
  t.equal(validateConfig({}, 'test').agent, undefined, 'no section: no agent');
  t.throws(() => validateConfig({ agent: { backend: 'gpt', base_url: 'http://x/v1', model: 'm' } }, 'test'), /agent\.backend/);
  t.throws(() => validateConfig({ agent: { backend: 'openai', base_url: 'x', model: 'm' } }, 'test'), /agent\.base_url/);
  t.throws(() => validateConfig({ agent: { backend: 'openai', base_url: 'http://x/v1', model: 'm', api_key: 'sk-123' } }, 'test'), /agent\.api_key: unknown field/, 'a key itself is refused: only the name of its variable');
  t.throws(() => validateConfig({ agent: { backend: 'openai', base_url: 'http://x/v1', model: 'm', max_steps: 0 } }, 'test'), /agent\.max_steps/);
});
