import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { applySnapshot, type TaskGuard } from '../../supervisor/snapshots/apply-snapshot.js';

const ONE = 'base#demo#one';
const TWO = 'base#demo#two';

/** A workspace where ONE exists ("old"), and a staging area holding new ONE and TWO. */
async function layout(t: Test) {
  const root = await mkdtemp(join(tmpdir(), 'taskyard-apply-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const workspace = join(root, 'ws');
  const scratch = join(root, 'scratch');
  await mkdir(join(workspace, 'base', ONE), { recursive: true });
  await writeFile(join(workspace, 'base', ONE, 'status.json'), 'old');
  const staged = (id: string) => join(scratch, 'unpacked', 'base', id);
  for (const id of [ONE, TWO]) {
    await mkdir(staged(id), { recursive: true });
    await writeFile(join(staged(id), 'status.json'), `new ${id}`);
  }
  const snapshot = { tasks: new Map([ONE, TWO].map((id) => [id, { taskType: 'base', dir: staged(id) }])), files: 2, bytes: 10 };
  return { workspace, scratch, snapshot, staged };
}

/**
 * The task system's side, answered by the test: nothing is active or invalid. `duringChecks`
 * runs after the plan is made and before anything moves, to break the apply on the real disk.
 */
function guard(duringChecks: () => Promise<void> = async () => undefined): TaskGuard & { refreshed: string[]; held: string[] } {
  const g = {
    refreshed: [] as string[],
    held: [] as string[],
    hold: (ids: readonly string[]) => {
      g.held.push(...ids);
      return () => g.held.splice(0);
    },
    isActive: async () => {
      await duringChecks();
      return false;
    },
    problemOf: async () => null,
    refresh: async (ids: readonly string[]) => void g.refreshed.push(...ids),
  };
  return g;
}

t.test('both Tasks are placed; the old directory is gone with its backup', async (t) => {
  const { workspace, scratch, snapshot } = await layout(t);
  const g = guard();
  t.same(await applySnapshot({ workspace, scratch, snapshot, deletions: [], guard: g }), { applied: [ONE, TWO], deleted: [] });
  t.equal(await readFile(join(workspace, 'base', ONE, 'status.json'), 'utf8'), `new ${ONE}`);
  t.equal(await readFile(join(workspace, 'base', TWO, 'status.json'), 'utf8'), `new ${TWO}`);
  t.same(g.refreshed, [ONE, TWO]);
  t.same(g.held, [], 'the claims are released');
  t.same(await readdir(scratch), ['unpacked'], 'no backup left');
});

t.test('a failure halfway puts everything back', async (t) => {
  const { workspace, scratch, snapshot, staged } = await layout(t);
  // TWO's staged directory vanishes after planning, so its rename fails after ONE was swapped.
  const g = guard(() => rm(staged(TWO), { recursive: true, force: true }));
  await t.rejects(applySnapshot({ workspace, scratch, snapshot, deletions: [], guard: g }), { code: 'ENOENT' });
  t.equal(await readFile(join(workspace, 'base', ONE, 'status.json'), 'utf8'), 'old', 'the replaced directory is back');
  t.same(await readdir(join(workspace, 'base')), [ONE], 'the half-applied snapshot is gone');
  t.same(g.refreshed, [], 'nothing to refresh');
  t.same(g.held, [], 'the claims are released');
});
