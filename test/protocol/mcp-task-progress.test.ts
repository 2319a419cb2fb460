// Runs on every HTTP front end.
import t, { type Test } from 'tap';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, RELATED_TASK_META_KEY, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';

/** Progress at least this often while nothing changes: far below the client timeouts used here. */
const config = { service: { mcp_progress_interval_ms: 300 } };

type Note = Progress & { _meta?: Record<string, { taskId?: string }> };

/**
 * A task-augmented tools/call; with `onprogress` the SDK client gives it a progress token and
 * keeps listening to that token after the CreateTaskResult, for the task's whole life.
 */
async function createTask(mcp: Client, name: string, args: Record<string, unknown>, onprogress?: (p: Note) => void): Promise<string> {
  const created = await mcp.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema, onprogress ? { onprogress } : {});
  return created.task.taskId;
}

function checkNotes(t: Test, notes: Note[], taskId: string): void {
  for (let i = 1; i < notes.length; i++) t.ok(notes[i]!.progress > notes[i - 1]!.progress, 'progress increases');
  t.ok(
    notes.every((n) => n._meta?.[RELATED_TASK_META_KEY]?.taskId === taskId),
    'every notification names its task (io.modelcontextprotocol/related-task)',
  );
}

// One service for every test that needs no fresh one of its own (each uses names of its own).
const svc = await startTestService(t, { config });

t.test("a task-augmented call's progress token hears the Task's steps while tasks/result waits", async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const notes: Note[] = [];
  // Long enough that, on a loaded machine, the Task still runs after the first wait is cut.
  const taskId = await createTask(mcp, 'submit', { task: 'sleep', seconds: 4, steps: 8 }, (p) => notes.push(p));
  t.equal(notes.length, 0, 'nothing yet: the CreateTaskResult came back at once');
  // A client that only polls reads the step in the task's status message.
  await waitFor(async () => /running · sleep \d+%/.test((await mcp.experimental.tasks.getTask(taskId)).statusMessage ?? ''), 15_000, 'tasks/get to name the step');
  // The client gives up on a first wait, then waits again: the token is the task's, not a request's.
  const first = new AbortController();
  const cut = mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { signal: first.signal }).then(
    () => 'answered',
    () => 'cut',
  );
  await waitFor(() => notes.length >= 1, 15_000, 'the first progress notification');
  first.abort();
  t.equal(await cut, 'cut');
  const result = await mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  t.match(result.structuredContent, { success: true, answer: { state: 'succeeded' } }, 'the terminal TaskStatus');
  t.ok(notes.length >= 3, `progress for the token of the tools/call came on the tasks/result streams (${notes.length})`);
  t.ok(notes.some((n) => /sleep \d+% · step \d\/8/.test(n.message ?? '')), `messages name the step and log line: ${notes.map((n) => n.message).join(' | ')}`);
  checkNotes(t, notes, taskId);
});

t.test("a tasks/result request's own progress token keeps it alive past the client's timeout", async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const taskId = await createTask(mcp, 'submit', { task: 'sleep', seconds: 3 });
  const notes: Note[] = [];
  const started = Date.now();
  const result = await mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 1500, resetTimeoutOnProgress: true, onprogress: (p) => notes.push(p) });
  t.ok(Date.now() - started >= 2000, 'the wait lasted longer than its timeout');
  t.match(result.structuredContent, { success: true, answer: { state: 'succeeded' } });
  t.ok(notes.length >= 3, `heartbeats kept coming while the Task said nothing new (${notes.length})`);
  checkNotes(t, notes, taskId);
});

t.test("a shell MCP task's output reaches its progress token as it is written", async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const notes: Note[] = [];
  const command = 'sleep 0.5; for i in 1 2 3; do echo line$i; sleep 0.3; done';
  const taskId = await createTask(mcp, 'shell', { command, timeout: 30 }, (p) => notes.push(p));
  const result = await mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  t.match(result.structuredContent, { success: true, answer: { stdout: 'line1\nline2\nline3\n' } }, 'the whole output in the result');
  const lines = notes.map((n) => n.message ?? '').filter((m) => /^line\d$/.test(m));
  t.ok(lines.length >= 2, `lines arrived as progress before the result: ${notes.map((n) => n.message).join(' | ')}`);
  checkNotes(t, notes, taskId);
});
