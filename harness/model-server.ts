import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Test } from 'tap';
import { startPlainServer } from './http-server.js';

/** One piece of a scripted model reply. */
export type ScriptItem = { reasoning: string } | { text: string; /** Send the text as one delta, however long. */ whole?: boolean } | { tool: string; input: unknown };

/** How the fixture answers one model request. */
export interface ScriptedReply {
  items?: ScriptItem[];
  /** Answer this HTTP status with an error body instead of a stream. */
  status?: number;
  /** Cut the connection after this many SSE frames (a broken stream). */
  breakAfter?: number;
  /** Send this many SSE frames, then nothing more until the client goes away. */
  holdAfter?: number;
}

export interface ModelServer {
  /** The base URL a client is configured with (`…/v1`). */
  readonly baseUrl: string;
  /** Parsed bodies of the model requests received, in order. */
  readonly requests: Array<{ path: string; body: Record<string, unknown>; headers: IncomingMessage['headers'] }>;
  /** Requests whose client went away before the reply ended. */
  readonly abandoned: number;
  /** True while a reply is held open (`holdAfter`). */
  readonly holding: boolean;
  /** Queues replies, answered in order to the next requests. */
  reply(...replies: ScriptedReply[]): void;
  /** Forgets the requests, the replies still queued and the abandoned count: a server shared by a file's tests starts each test as a fresh one. */
  reset(): void;
}

const PIECE = 3;

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += PIECE) out.push(text.slice(i, i + PIECE));
  return out;
}

/** The OpenAI chat-completions stream of a reply: `data:` frames, `[DONE]` last. */
function openAiFrames(items: ScriptItem[]): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const frames = [chunk({ role: 'assistant', content: '' })];
  let tools = 0;
  for (const item of items) {
    if ('reasoning' in item) frames.push(...pieces(item.reasoning).map((p) => chunk({ reasoning_content: p })));
    else if ('text' in item) frames.push(...(item.whole ? [item.text] : pieces(item.text)).map((p) => chunk({ content: p })));
    else {
      const index = tools++;
      frames.push(chunk({ tool_calls: [{ index, id: `call_${index}_${Math.random().toString(36).slice(2, 8)}`, type: 'function', function: { name: item.tool, arguments: JSON.stringify(item.input) } }] }));
    }
  }
  frames.push(chunk({}, tools ? 'tool_calls' : 'stop'));
  frames.push(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } })}\n\n`);
  frames.push('data: [DONE]\n\n');
  return frames;
}

/** The Anthropic Messages stream of a reply: typed events, content blocks by index. */
function anthropicFrames(items: ScriptItem[]): string[] {
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const frames = [ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'scripted', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 11, output_tokens: 1 } } })];
  let tools = 0;
  items.forEach((item, index) => {
    if ('reasoning' in item) {
      frames.push(ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      frames.push(...pieces(item.reasoning).map((p) => ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: p } })));
      frames.push(ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJl' } }));
    } else if ('text' in item) {
      frames.push(ev('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      frames.push(...pieces(item.text).map((p) => ev('content_block_delta', { index, delta: { type: 'text_delta', text: p } })));
    } else {
      frames.push(ev('content_block_start', { index, content_block: { type: 'tool_use', id: `toolu_${tools++}_${Math.random().toString(36).slice(2, 8)}`, name: item.tool, input: {} } }));
      frames.push(ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(item.input) } }));
    }
    frames.push(ev('content_block_stop', { index }));
  });
  frames.push(ev('message_delta', { delta: { stop_reason: tools ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }));
  frames.push(ev('message_stop', {}));
  return frames;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
}

/**
 * A real model server on loopback that speaks the OpenAI chat-completions streaming protocol
 * (`POST /v1/chat/completions`) and the Anthropic Messages streaming protocol (`POST /v1/messages`),
 * answering each request with the next scripted reply. The real client libraries talk to it.
 */
export async function startModelServer(t: Pick<Test, 'teardown'>): Promise<ModelServer> {
  const queue: ScriptedReply[] = [];
  const state = { abandoned: 0, holding: false };
  const requests: ModelServer['requests'] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const path = req.url ?? '';
    requests.push({ path, body, headers: req.headers });
    const reply = queue.shift();
    if (!reply) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'the fixture has no scripted reply left' } }));
      return;
    }
    if (reply.status !== undefined) {
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key / bad bearer' } }));
      return;
    }
    const frames = path.endsWith('/messages') ? anthropicFrames(reply.items ?? []) : openAiFrames(reply.items ?? []);
    let ended = false;
    res.on('close', () => {
      if (!ended) state.abandoned++;
      state.holding = false;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [i, frame] of frames.entries()) {
      if (reply.breakAfter === i) {
        res.destroy();
        return;
      }
      if (reply.holdAfter === i) {
        state.holding = true;
        return;
      }
      res.write(frame);
      // A turn of the event loop between frames, so the client sees them arrive one by one.
      await new Promise((r) => setImmediate(r));
    }
    ended = true;
    res.end();
  };
  const server = await startPlainServer(t, handle);
  return {
    baseUrl: `${server.url}/v1`,
    requests,
    get abandoned() {
      return state.abandoned;
    },
    get holding() {
      return state.holding;
    },
    reply: (...replies) => queue.push(...replies),
    reset: () => {
      requests.length = 0;
      queue.length = 0;
      state.abandoned = 0;
    },
  };
}
