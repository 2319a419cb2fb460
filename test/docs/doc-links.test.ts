import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { brokenLinks, headingAnchors, markdownFiles } from '../helpers/doc-links.js';

t.test('every relative link and anchor in README.md and docs/**/*.md resolves', async (t) => {
  const files = markdownFiles(PACKAGE_ROOT);
  t.ok(files.length >= 20, `${files.length} pages checked`);
  t.same(files.flatMap((file) => brokenLinks(PACKAGE_ROOT, file)), [], 'no broken link');
});

t.test('the check finds a missing page, a missing anchor and a link out of the repository', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'taskyard-links-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'docs'));
  await writeFile(join(root, 'docs', 'page.md'), '# A page\n\n## Step `two`: go!\n');
  await writeFile(
    join(root, 'README.md'),
    [
      '[ok](docs/page.md#step-two-go) [ok](#the-front) [web](https://example.org/x#y)',
      '# The front',
      '[gone](docs/gone.md) [bad anchor](docs/page.md#step-three) [out](../outside.md)',
      '`[code](docs/not-a-link.md)`',
      '```md\n[example](docs/example.md)\n```',
    ].join('\n'),
  );
  t.same(brokenLinks(root, join(root, 'README.md')), [
    'README.md: docs/gone.md (no such file)',
    'README.md: docs/page.md#step-three (no heading makes #step-three)',
    'README.md: ../outside.md (no such file)',
  ]);
  t.same([...headingAnchors('# Tasks\n## Tasks\n## `await_task`, a wait\n')], ['tasks', 'tasks-1', 'await_task-a-wait']);
});
