import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { checkLayout, describeLayout, MAX_LINES } from './import-graph.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

t.test('the repository has no import cycle, between files or folders, and no code file over 400 lines', async (t) => {
  const report = checkLayout(ROOT);
  t.ok(report.files > 400, `the whole tree was read (${report.files} files)`);
  // On failure the diff lists each cycle with the imports that close it, and each long file.
  t.equal(describeLayout(report), '', 'nothing to report');
});

/** Writes `files` (path → content) under a fresh scratch directory, removed when the test ends. */
async function scratchTree(t: Test, files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'taskyard-layout-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

t.test('the rule fails on a cycle of files, a cycle of folders at any level, and a long file', async (t) => {
  const root = await scratchTree(t, {
    // a file cycle through a type-only import and a dynamic import, across two top-level folders
    'a/x.ts': "import type { Y } from '../b/y.js';\nexport type X = Y;\n",
    'b/y.ts': "export type Y = string;\nexport const load = () => import('../a/x.js');\n",
    // folders that import each other without any file cycle, two levels down
    'lib/p/one.ts': "export { two } from '../q/two.js';\n",
    'lib/q/two.ts': 'export const two = 2;\n',
    'lib/q/three.ts': "import { four } from '../p/four.js';\nexport const three = four;\n",
    'lib/p/four.ts': 'export const four = 4;\n',
    // a folder and its own parent's files
    'lib/top.ts': "export { two } from './q/two.js';\n",
    'lib/q/up.ts': "export * from '../top.js';\n",
    // one-way layers and what is not ours stay quiet
    'ok/low.ts': 'export const low = 1;\n',
    'ok/high/use.ts': "import { low } from '../low.js';\nimport { readFileSync } from 'node:fs';\nexport const use = [low, readFileSync];\n",
    'node_modules/dep/index.ts': "import '../../a/x.js';\n",
    'long/at-limit.ts': 'export {};\n'.repeat(MAX_LINES),
    'long/over.ts': 'export {};\n'.repeat(MAX_LINES + 1),
  });
  const report = checkLayout(root);
  t.same(
    report.fileCycles.map((c) => c.files),
    [['a/x.ts', 'b/y.ts']],
    'the file cycle, type-only and dynamic imports included',
  );
  t.same(
    report.folderCycles.map((c) => [c.parent, c.members]),
    [
      ['.', ['a', 'b']],
      ['lib', ['.', 'p', 'q']],
    ],
    'the folder cycles, each at the level where its folders part',
  );
  t.same(report.longFiles, [{ file: 'long/over.ts', lines: MAX_LINES + 1 }], 'only the file over the limit');
  const text = describeLayout(report);
  t.match(text, 'folder cycle in lib/: . ↔ p ↔ q', 'the report names the cycle');
  for (const edge of ['lib/p/one.ts → lib/q/two.ts', 'lib/q/three.ts → lib/p/four.ts', 'lib/top.ts → lib/q/two.ts', 'lib/q/up.ts → lib/top.ts', 'a/x.ts → b/y.ts', 'b/y.ts → a/x.ts']) {
    t.match(text, edge, `and the import ${edge}`);
  }
  t.notMatch(text, 'ok/', 'one-way imports are not reported');
});
