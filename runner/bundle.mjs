// Bundles the compiled task runner (dist/runner/main.js and what it imports) into one CommonJS
// file, runner-main.cjs, and its entry (runner-loader.js) into runner.cjs, the file the spawner
// starts for every Task. Node loads one CJS file ~8 ms faster than the same code as several ES
// modules, and every Task start pays that. Then one demo run through the entry saves V8's code
// cache of the bundle next to it (see runner-loader.ts).
// Runs after tsc (`npm run build`): edit the TypeScript, never the bundle.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'dist', 'runner');
const common = { bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning' };

await build({ ...common, entryPoints: [join(outDir, 'main.js')], outfile: join(outDir, 'runner-main.cjs'), sourcemap: 'linked' });
await build({ ...common, entryPoints: [join(outDir, 'runner-loader.js')], outfile: join(outDir, 'runner.cjs') });

// The code cache of the previous bundle goes first: V8 checks a cache against its source's length
// only, so a rebuilt bundle of the same length would run the old compiled code, and the demo run
// below would save that old code again.
rmSync(join(outDir, 'runner-main.cjs.code-cache'), { force: true });

// One stepped demo, started directly (its identity in the environment), in a scratch workspace.
const workspace = mkdtempSync(join(tmpdir(), 'taskyard-code-cache-'));
try {
  const runId = '0'.repeat(32);
  const taskId = 'base#demo#code-cache';
  const dir = join(workspace, 'base', taskId);
  mkdirSync(dir, { recursive: true });
  const status = { task_id: taskId, run_id: runId, task_type: 'base', task_name: 'demo', config: { x: 1, y: 2, fail: false, task_name: 'code-cache', source_tasks: '' }, state: 'queued', pid: null, created_at: new Date().toISOString(), started_at: null, finished_at: null, steps: [], result: {}, error: '', exit_code: 0, log_path: `base/${taskId}/task.log` };
  writeFileSync(join(dir, 'status.json'), JSON.stringify(status));
  writeFileSync(join(dir, 'events.jsonl'), '');
  const identity = { TASKYARD_WORKSPACE: workspace, TASKYARD_TASK_DIR: dir, TASKYARD_TASK_ID: taskId, TASKYARD_RUN_ID: runId, TASKYARD_TASK_TYPE: 'base', TASKYARD_TASK_REGISTRATION: 'demo', TASKYARD_TASK_MODULE: '' };
  execFileSync(process.execPath, [join(outDir, 'runner.cjs'), '--run', runId, '--write-code-cache'], { cwd: dir, env: { ...process.env, ...identity }, stdio: 'ignore' });
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
