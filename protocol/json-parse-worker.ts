// The parse thread's side (see json-parse-thread.ts): decodes and parses one body per message.
import { parentPort } from 'node:worker_threads';
import { HttpError } from '../core/errors.js';
import { parseJson } from './json-body.js';
import type { ParseReply, ParseRequest } from './json-parse-messages.js';

function reply({ id, bytes }: ParseRequest): ParseReply {
  try {
    return { id, ok: true, value: parseJson(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) };
  } catch (err) {
    if (err instanceof HttpError) return { id, ok: false, status: err.status, detail: err.detail };
    return { id, ok: false, status: 422, detail: [{ loc: ['body'], msg: `Invalid JSON: ${(err as Error).message}`, type: 'json_invalid' }] };
  }
}

parentPort!.on('message', (request: ParseRequest) => parentPort!.postMessage(reply(request)));
