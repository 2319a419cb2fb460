// Runs on every HTTP front end.
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { readSseEvents } from '../../protocol/sse-reader.js';
import type { LogEvent, StreamEvent } from '../../schemas/events.js';
import { OutputStreamer, type OutputChunk } from '../../workers/output-stream.js';
import { startTestService, waitFor } from '../helpers/service.js';
import { connectMcp } from '../helpers/mcp-client.js';
import { CLI } from '../helpers/run-cli.js';

/**
 * Writes a line to each stream, then waits for the test to create `gate` (a file of that name in
 * the workspace, one per test, as the tests share a service): output seen before the gate exists
 * can only have been streamed, never collected at the end.
 */
const gated = (gate: string) => `printf 'one\\n'; printf 'err1\\n' >&2; while [ ! -e ${gate} ]; do sleep 0.05; done; printf 'two\\n'`;

// One service for the tests that call it (none needs a fresh one; each gates on a file of its own).
// Its long MCP progress interval matters only to the MCP test: the lines must arrive as progress
// messages of their own, not as a periodic progress beat.
const svc = await startTestService(t, { config: { service: { mcp_progress_interval_ms: 60_000 } } });

t.test('the output streamer keeps characters whole and counts bytes', async (t) => {
  const chunks: OutputChunk[] = [];
  const streamer = new OutputStreamer('stdout', (c) => chunks.push(c));
  const euro = Buffer.from('a€b'); // € is 3 bytes
  streamer.push(euro.subarray(0, 2));
  streamer.push(euro.subarray(2, 4));
  streamer.push(euro.subarray(4));
  streamer.push(Buffer.from([0xe2, 0x82])); // an unfinished character at the end
  streamer.flush();
  t.same(
    chunks.map((c) => [c.content, c.start_offset, c.next_offset]),
    [
      ['a', 0, 1],
      ['€', 1, 4],
      ['b', 4, 5],
      ['\ufffd', 5, 7],
    ],
  );
});

t.test('over /events, stdout and stderr arrive as log events while the command runs', async (t) => {
  const res = await svc.fetch('/jobs/shell/events', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { command: gated('gate-events'), timeout: 20 } }) });
  t.equal(res.status, 200);
  const events: StreamEvent[] = [];
  const reading = (async () => {
    for await (const event of readSseEvents(res.body as unknown as AsyncIterable<Uint8Array>)) events.push(event);
  })();
  const logs = () => events.filter((e): e is LogEvent => e.kind === 'log');
  await waitFor(() => logs().some((e) => e.channel === 'stdout' && e.content === 'one\n') && logs().some((e) => e.channel === 'stderr' && e.content === 'err1\n'), 30_000, 'both lines before the command ends');
  t.notOk(events.some((e) => e.kind === 'result'), 'the command is still running');
  await writeFile(join(svc.workspace, 'gate-events'), '');
  await reading;
  const stdout = logs().filter((e) => e.channel === 'stdout');
  t.same(stdout.map((e) => e.content).join(''), 'one\ntwo\n');
  t.same(stdout.map((e) => [e.start_offset, e.next_offset]), [[0, 4], [4, 8]], 'byte offsets follow each other');
  t.match(stdout[0], { file_size: 4, has_more_before: false, reset: false });
  const result = events.at(-1)!;
  t.match(result, { kind: 'result', success: true, answer: { stdout: 'one\ntwo\n', stderr: 'err1\n', exit_code: 0, stdout_truncated: false } });
});

t.test('streamed output still leaves the final answer capped at 1 MiB with its flag', async (t) => {
  const { events } = await svc.events('shell', { command: 'head -c 1500000 /dev/zero | tr "\\0" x', timeout: 20 });
  const result = events.at(-1) as { answer: { stdout: string; stdout_truncated: boolean } };
  t.equal(result.answer.stdout.length, 1024 * 1024);
  t.equal(result.answer.stdout_truncated, true);
  const logs = events.filter((e) => e['kind'] === 'log') as unknown as LogEvent[];
  for (let i = 1; i < logs.length; i++) t.ok(logs[i]!.start_offset >= logs[i - 1]!.next_offset, 'offsets never go back');
  t.equal(logs.at(-1)!.next_offset, 1_500_000, 'the watcher saw every byte');
});

t.test('over MCP with a progress token, the lines arrive as progress messages', async (t) => {
  const mcp = await connectMcp(t, svc.url, svc.token);
  const messages: string[] = [];
  const call = mcp.callTool({ name: 'shell', arguments: { command: gated('gate-mcp'), timeout: 20 } }, undefined, { onprogress: (p) => messages.push(p.message ?? '') });
  await waitFor(() => messages.includes('one') || messages.includes('stderr: err1'), 30_000, 'a line before the command ends');
  await writeFile(join(svc.workspace, 'gate-mcp'), '');
  const result = await call;
  t.match(result.structuredContent, { success: true, answer: { stdout: 'one\ntwo\n' } });
  t.ok(messages.includes('two'), `the last line came too: ${JSON.stringify(messages)}`);
});

t.test('the CLI prints shell lines with --stream as they come', async (t) => {
  const child = spawn(process.execPath, [CLI, 'shell', '--command', gated('gate-cli'), '--timeout', '20', '--stream', '--url', svc.url], {
    env: { PATH: process.env['PATH'] ?? '', TASKYARD_TOKEN: svc.token ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => void child.kill());
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  await waitFor(() => out.includes('"content":"one\\n"'), 30_000, 'the first line before the command ends');
  t.notMatch(out, '"kind":"result"');
  await writeFile(join(svc.workspace, 'gate-cli'), '');
  t.equal(await exited, 0);
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as StreamEvent);
  t.match(lines.at(-1), { kind: 'result', success: true });
  t.ok(lines.some((e) => e.kind === 'log' && e.channel === 'stderr' && e.content === 'err1\n'));
});
