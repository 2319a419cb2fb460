import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { put, writeParquetFixture } from '../workspace/fixtures.js';
import type { TaskHandle } from '../../schemas/tasks.js';
import { check } from '../../schemas/validator.js';

/**
 * Each tool publishes the JobResponse with `answer` narrowed to its Job's answer schema, and the
 * official SDK client validates every structuredContent against it (throwing on a mismatch). So
 * real answers of every kind, successes and business failures, must pass through the client.
 */
t.test("the SDK client accepts every Job's real answers against its published outputSchema", async (t) => {
  const svc = await startTestService(t);
  const mcp = await connectMcp(t, svc.url, svc.token);
  const { tools } = await mcp.listTools(); // caches the outputSchema validators the client applies
  const call = async (name: string, args: Record<string, unknown> = {}, success = true) => {
    const result = await mcp.callTool({ name, arguments: args });
    t.equal(result.isError, !success, `${name} ${JSON.stringify(args)}: ${success ? 'succeeds' : 'fails'}, its answer valid`);
    return (result.structuredContent as { answer: unknown }).answer;
  };

  await put(svc.workspace, 'data/table.csv', 'a,b\n1,x\n2,y\n');
  await put(svc.workspace, 'data/doc.json', '{"k": [1, 2]}');
  await put(svc.workspace, 'data/notes.md', '---\ntitle: t\n---\n# hi\n');
  await put(svc.workspace, 'data/blob.bin', new Uint8Array(4));
  await writeParquetFixture(`${svc.workspace}/data/rows.parquet`, 20, 8);
  await put(svc.workspace, 'gone.txt', 'x');

  await call('version');
  await call('list_machines');
  await call('machine_status');
  await call('shell', { command: 'echo hi' });
  await call('shell', { command: 'exit 3' }, false);
  await call('list_entries', { path: 'data' });
  for (const file of ['table.csv', 'doc.json', 'notes.md', 'blob.bin', 'rows.parquet']) await call('preview_file', { path: `data/${file}` });
  await call('count_csv_rows', { path: 'data/table.csv' });
  await call('count_csv_rows', { path: 'data/doc.json' }, false);
  await call('delete_entries', { paths: ['gone.txt'] });
  await call('list_installed_task_definitions');
  await call('get_task_definition', { task: 'demo' });
  const handle = (await call('submit', { task: 'demo', x: 2, y: 3 })) as TaskHandle;
  await call('wait_task', { task_id: handle.task_id, run_id: handle.run_id });
  await call('stream_task', { task_id: handle.task_id });
  await call('status', { task_id: handle.task_id });
  await call('list_task_ids');
  await call('list_task_statuses');
  await call('query_task_statuses', { limit: 5 });
  await call('read_task_log', { task_id: handle.task_id });
  await call('read_task_columns', { task_ids: [handle.task_id, 'base#demo#nobody'], columns: [{ kind: 'input', name: 'x' }, { kind: 'output', name: 'operands' }, { kind: 'metric', name: 'loss' }] });
  await call('get_task_graph', { task_id: handle.task_id });
  await call('get_task_context', { task_id: handle.task_id });
  await call('list_task_runs', { task_type: 'base' });
  await call('cancel', { task_id: handle.task_id });
  const failed = (await call('submit', { task: 'demo', x: 1, y: 1, fail: true })) as TaskHandle;
  await call('wait_task', { task_id: failed.task_id, run_id: failed.run_id }, false);
  await call('delete_tasks', { task_ids: [handle.task_id] });
  await call('status', { task_id: 'base#demo#nobody' }, false); // a KeyError's text
  await call('list_plugins');
  await call('list_agent_sessions', {}, false); // no agent section: the failure's text

  // The narrowing is real: an answer of the wrong shape fails the published (plain JSON) schema.
  const valid = (name: string, answer: unknown) => check(tools.find((x) => x.name === name)!.outputSchema!, { answer, success: true, metadata: {} }).ok;
  t.notOk(valid('machine_status', { cpu: 'many' }), 'machine_status: a wrong MachineInfo is refused');
  t.notOk(valid('machine_status', 42), 'machine_status: a number is refused');
  t.ok(valid('machine_status', 'KeyError: x'), "machine_status: a failure's error text passes");
  t.notOk(valid('submit', { task_id: 'a#b#c', run_id: 'r' }), 'submit: a handle without `task` is refused');
  t.ok(valid('submit', { task_id: 'a#b#c', run_id: 'r', task: 'b' }), 'submit: a TaskHandle passes');
});
