import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes finished demo records number `from` to `count - 1` (status and metadata) straight to a workspace. */
export function writeDemoRecords(workspace: string, count: number, from = 0): string[] {
  const ids: string[] = [];
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  for (let i = from; i < count; i++) {
    const name = `rec-${String(i).padStart(6, '0')}`;
    const id = `base#demo#${name}`;
    const dir = join(workspace, 'base', id);
    mkdirSync(dir, { recursive: true });
    const created = new Date(base + i * 1000).toISOString();
    const config = { x: i, y: 1, fail: false, task_name: name, source_tasks: '' };
    const result = { result: i + 1, branch: 'different', operands: ['x', 'y'], artifacts: {} };
    writeFileSync(join(dir, 'status.json'), JSON.stringify({
      task_id: id, run_id: `run${i}`, task_type: 'base', task_name: 'demo', config, state: 'succeeded', pid: 1000 + i,
      created_at: created, started_at: created, finished_at: created, steps: [], result, error: '', exit_code: 0, log_path: `base/${id}/task.log`,
    }));
    writeFileSync(join(dir, 'metadata.json'), JSON.stringify({ task_id: id, reg_name: 'demo', created_at: created, task_type: 'base', input_params: config, output_params: result }));
    ids.push(id);
  }
  return ids;
}
