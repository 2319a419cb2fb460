import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { renderCatalog, withCatalog, type CatalogJob } from '../helpers/jobs-reference.js';
import { startTestService } from '../helpers/service.js';

/**
 * docs/reference/jobs.md holds the catalog as the service publishes it (every Job, its
 * description and parameters). `TASKYARD_WRITE_DOCS=1` writes the page's catalog from the service
 * instead of failing, after a Job was added or changed.
 */
const PAGE = join(PACKAGE_ROOT, 'docs', 'reference', 'jobs.md');

t.test("docs/reference/jobs.md lists the catalog's Jobs as GET /jobs publishes them", async (t) => {
  const svc = await startTestService(t);
  const res = await svc.fetch('/jobs');
  const body = (await res.json()) as { answer: { items: CatalogJob[] } };
  const jobs = body.answer.items;
  t.ok(jobs.some((job) => job.name === 'move_entries'), 'the catalog as a token sees it');
  const page = await readFile(PAGE, 'utf8');
  const expected = withCatalog(page, renderCatalog(jobs));
  if (process.env['TASKYARD_WRITE_DOCS'] === '1' && expected !== page) await writeFile(PAGE, expected);
  else t.equal(page, expected, 'the page is up to date (TASKYARD_WRITE_DOCS=1 rewrites it)');
  const listed = [...expected.matchAll(/^### `(\w+)`$/gm)].map((m) => m[1]);
  t.same(listed, jobs.map((job) => job.name), 'every Job once, in catalog order');
});
