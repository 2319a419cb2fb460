import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startTestService, waitFor } from '../helpers/service.js';

t.test('move_entries: a staged upload becomes data/train.csv; copy keeps the source; every refusal leaves everything in place', async (t) => {
  const svc = await startTestService(t);
  const ws = svc.workspace;
  const staged = await svc.fetch('/files', { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-file-name': 'train.csv' }, body: 'a,b\n1,2\n' });
  const { path } = ((await staged.json()) as { answer: { path: string } }).answer;

  const moved = await svc.call('move_entries', { moves: [{ from: path, to: 'data/train.csv' }] });
  t.same(moved.body.answer, [{ from: path, to: 'data/train.csv', kind: 'file' }], 'the answer names each move');
  t.equal(await readFile(join(ws, 'data/train.csv'), 'utf8'), 'a,b\n1,2\n', 'the file is in place, its parent made');
  t.notOk(existsSync(join(ws, path)), 'and no longer staged');

  await mkdir(join(ws, 'runs/a/sub'), { recursive: true });
  await writeFile(join(ws, 'runs/a/sub/x.txt'), 'x');
  const copied = await svc.call('move_entries', { moves: [{ from: 'runs/a', to: 'runs/b' }], copy: true });
  t.same(copied.body.answer, [{ from: 'runs/a', to: 'runs/b', kind: 'directory' }]);
  t.equal(await readFile(join(ws, 'runs/b/sub/x.txt'), 'utf8'), 'x', 'a directory copies whole');
  t.ok(existsSync(join(ws, 'runs/a/sub/x.txt')), 'and the source stays');

  await writeFile(join(ws, 'other.csv'), 'other');
  await symlink('/etc', join(ws, 'etc-link'));
  await mkdir(join(ws, 'linked'));
  await symlink('../data', join(ws, 'linked/data'));
  const refused = async (args: Record<string, unknown>, answer: RegExp, why: string) => {
    const res = await svc.call('move_entries', args);
    t.equal(res.body.success, false, why);
    t.match(String(res.body.answer), answer, why);
  };
  await refused({ moves: [{ from: 'other.csv', to: 'moved.csv' }, { from: 'data/train.csv', to: 'other.csv' }] }, /^FileExistsError: other.csv exists; pass overwrite: true/, 'an occupied destination');
  t.notOk(existsSync(join(ws, 'moved.csv')), 'a refused batch moves nothing, not even the moves before the refused one');
  await refused({ moves: [{ from: 'nothing.csv', to: 'x.csv' }] }, /^FileNotFoundError: no such file or directory: nothing.csv/, 'a missing source');
  await refused({ moves: [{ from: '../outside', to: 'x' }] }, /^PermissionError: path escapes the workspace/, 'an escape');
  await refused({ moves: [{ from: 'other.csv', to: '.taskyard/x' }] }, /^PermissionError: path is private to the service/, 'the private directory');
  await refused({ moves: [{ from: 'other.csv', to: 'etc-link/passwd' }] }, /^PermissionError: path escapes the workspace/, 'a destination through a link out of the workspace');
  await refused({ moves: [{ from: '.', to: 'x' }] }, /^PermissionError: the workspace root cannot be moved/, 'the root');
  await refused({ moves: [{ from: 'runs', to: 'runs/a/inner' }] }, /^ValueError: cannot move or copy runs into itself/, 'into itself');
  await refused({ moves: [{ from: 'etc-link', to: 'x' }] }, /^PermissionError: path escapes the workspace: etc-link/, 'a link out of the workspace');
  await symlink('runs', join(ws, 'inner-link'));
  await refused({ moves: [{ from: 'inner-link', to: 'x' }] }, /^PermissionError: symbolic links are not moved or copied: inner-link/, 'a link, even one inside');
  await refused({ moves: [{ from: 'linked', to: 'elsewhere/linked' }], copy: true }, /^PermissionError: symbolic links are not moved or copied: linked\/data/, 'a tree holding a link');
  t.equal(await readFile(join(ws, 'other.csv'), 'utf8'), 'other', 'nothing was touched by the refusals');

  const replaced = await svc.call('move_entries', { moves: [{ from: 'data/train.csv', to: 'other.csv' }], overwrite: true });
  t.equal(replaced.body.success, true, 'overwrite replaces');
  t.equal(await readFile(join(ws, 'other.csv'), 'utf8'), 'a,b\n1,2\n');

  // An active Task's directory is out of bounds; a finished one is the user's.
  const running = (await svc.call('submit', { task: 'sleep', seconds: 60, task_name: 'busy' })).body.answer;
  await waitFor(async () => (await svc.call('status', { task_id: running.task_id })).body.answer.state === 'running', 15_000, 'the Task to run');
  await refused({ moves: [{ from: 'other.csv', to: `base/${running.task_id}/input.csv` }] }, /^PermissionError: base\/base#sleep#busy\/input.csv is in the directory of base#sleep#busy, which is queued or running/, 'into a running Task');
  await svc.call('cancel', { task_id: running.task_id });
  await svc.call('wait_task', { task_id: running.task_id, run_id: running.run_id });
  const into = await svc.call('move_entries', { moves: [{ from: 'other.csv', to: `base/${running.task_id}/input.csv` }], copy: true });
  t.equal(into.body.success, true, 'a finished Task directory may be written');
});
