import type { AgentMessageEvent } from '../schemas/events.js';
import { EXIT, UsageError } from './cli-errors.js';
import { resolveConnection } from './connection.js';
import { streamJob } from './job-client.js';
import { subCommand } from './sub-command.js';

const USAGE = `usage: taskyard chat "MESSAGE" [--session ID] [--url URL | --target ADDRESS] [--token TOKEN]

Sends MESSAGE to the service's research assistant (agent_chat) and prints its answer as it streams.
Without --session a new session starts; its ID is printed on stderr at the end, to go on with
--session. Thinking is not printed; each Job the assistant calls is shown on stderr. Exits 0 when
the turn completed, 1 otherwise (the reason is printed on stderr).`;

type Patch = AgentMessageEvent['presentation'][number];

/** `--session ID` or `--session=ID` among the words after the message. */
function sessionOf(fields: readonly string[]): string | undefined {
  let session: string | undefined;
  for (let i = 0; i < fields.length; i++) {
    const m = /^--session(?:=(.*))?$/s.exec(fields[i]!);
    if (!m) throw new UsageError(`unexpected argument ${JSON.stringify(fields[i])} (quote the message as one word)`);
    session = m[1] ?? fields[++i];
    if (!session) throw new UsageError('--session needs a session ID');
  }
  return session;
}

/** Draws one patch on the terminal: the assistant's text on stdout, tool calls and errors on stderr. */
function draw(p: Patch, roles: Map<string, unknown>): void {
  if (p.operation === 'start') roles.set(p.block_id, p.payload['role']);
  if (p.block_type === 'text' && p.operation === 'append' && roles.get(p.block_id) === 'assistant') process.stdout.write(p.delta);
  if (p.block_type === 'tool' && p.operation === 'replace') {
    const response = p.payload['response'] as { success?: unknown } | undefined;
    console.error(`[job] ${String(p.payload['job'])} ${JSON.stringify(p.payload['arguments'] ?? {})} → ${response?.success ? 'ok' : 'failed'}`);
  }
  if ((p.block_type === 'error' || p.block_type === 'system') && p.operation === 'replace') console.error(`[${p.block_type}] ${p.delta}`);
}

/** `taskyard chat "MESSAGE" [--session ID]`: returns the exit code. */
export function chatCommand(argv: string[]): Promise<number> {
  return subCommand('taskyard chat', USAGE, argv, async ({ job: message, options, fields }) => {
    if (!message) throw new UsageError('give the message to send, in quotes');
    const session = sessionOf(fields);
    const conn = await resolveConnection(options);
    const roles = new Map<string, unknown>();
    for await (const event of streamJob(conn, 'agent_chat', { message, ...(session ? { session_id: session } : {}) })) {
      if (event.kind === 'agent_message') for (const p of event.presentation) draw(p, roles);
      if (event.kind !== 'result') continue;
      process.stdout.write('\n');
      const id = event.metadata['session_id'];
      if (!event.success) console.error(`taskyard chat: ${String(event.answer)}`);
      if (typeof id === 'string') console.error(`session: ${id}`);
      return event.success ? EXIT.success : EXIT.failure;
    }
    console.error('taskyard chat: the stream ended without a result event');
    return EXIT.failure;
  });
}
