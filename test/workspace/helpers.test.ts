import t from 'tap';
import { HttpError } from '../../core/errors.js';
import { normalizeClientPath, UnsafePathError } from '../../supervisor/workspace/safe-path.js';
import { stagedFilePath, uploadDirectory, uploadFileName } from '../../supervisor/workspace/staged-path.js';
import { overlappingGroups } from '../../workers/preview/parquet.js';
import { previewKindOf } from '../../workers/preview/preview-kind.js';

/** The error `fn` throws, or undefined. */
function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

t.test('normalizeClientPath: lexical rules', async (t) => {
  for (const [input, expected] of [['', ''], ['.', ''], ['./', ''], ['a//b/./c/', 'a/b/c'], ['a/b/..', 'a'], ['ünï/日本.txt', 'ünï/日本.txt'], ['%2e%2e', '%2e%2e']]) {
    t.equal(normalizeClientPath(input!), expected, JSON.stringify(input));
  }
  for (const [input, reason] of [['..', 'escape'], ['a/../..', 'escape'], ['/etc', 'absolute'], ['a\0', 'nul'], ['.taskyard', 'private'], ['x/../.taskyard/token', 'private']]) {
    const err = caught(() => normalizeClientPath(input!));
    t.ok(err instanceof UnsafePathError && err.reason === reason && err.type === 'PermissionError', `${JSON.stringify(input)} → ${reason}`);
  }
});

t.test('overlappingGroups picks the row groups of a window', async (t) => {
  t.same(overlappingGroups([100, 100, 100], 0, 200), { groups: [0, 1], firstRow: 0 });
  t.same(overlappingGroups([100, 100, 100], 150, 160), { groups: [1], firstRow: 100 });
  t.same(overlappingGroups([100, 100, 100], 199, 201), { groups: [1, 2], firstRow: 100 });
  t.same(overlappingGroups([100, 100, 100], 300, 500), { groups: [], firstRow: 0 });
});

t.test('preview kind by extension', async (t) => {
  const kinds = ['a.MD', 'b.json', 'c.yml', 'd.tsv', 'e.parquet', 'f.log', 'Makefile', '.gitignore', 'g.png', 'noext'].map(previewKindOf);
  t.same(kinds, ['markdown', 'json', 'yaml', 'csv', 'parquet', 'text', 'text', 'text', 'unsupported', 'unsupported']);
});

t.test('staging header and path rules', async (t) => {
  t.equal(uploadFileName('r%C3%A9sum%C3%A9.pdf'), 'résumé.pdf');
  t.same(uploadDirectory(undefined), ['tmp']);
  t.same(uploadDirectory('tmp/a/./b/'), ['tmp', 'a', 'b']);
  t.equal(stagedFilePath(`tmp/x/${'a'.repeat(64)}/f.txt`), `tmp/x/${'a'.repeat(64)}/f.txt`);
  for (const bad of ['tmp/f.txt', `tmp/${'A'.repeat(64)}/f.txt`, `other/${'a'.repeat(64)}/f.txt`]) {
    const err = caught(() => stagedFilePath(bad));
    t.ok(err instanceof HttpError && err.status === 422, bad);
  }
});
