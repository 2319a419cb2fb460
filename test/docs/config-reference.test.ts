import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { ConfigFile } from '../../schemas/config.js';
import { renderKeys, withKeys } from '../helpers/config-reference.js';

/**
 * docs/reference/configuration.md's table of keys is the configuration schema's, every key with
 * its type, default and bounds. `TASKYARD_WRITE_DOCS=1` writes it from the schema instead of
 * failing, after a key was added or changed.
 */
const PAGE = join(PACKAGE_ROOT, 'docs', 'reference', 'configuration.md');

t.test('docs/reference/configuration.md lists every configuration key as schemas/config.ts has it', async (t) => {
  const page = await readFile(PAGE, 'utf8');
  const expected = withKeys(page, renderKeys(JSON.parse(JSON.stringify(ConfigFile)) as Record<string, unknown>));
  if (process.env['TASKYARD_WRITE_DOCS'] === '1' && expected !== page) await writeFile(PAGE, expected);
  else t.equal(page, expected, 'the table is up to date (TASKYARD_WRITE_DOCS=1 rewrites it)');
  for (const key of ['service.port', 'service.tokens[].jobs', 'executor.sbatch_timeout_s', 'tasks.<name>.retries.max', 'agent.max_steps', 'webhook_hosts']) {
    t.match(expected, new RegExp(`^\\| \`${key.replace(/[.[\]<>]/g, '\\$&')}\` \\|`, 'm'), `${key} is listed`);
  }
});
