import { RequestEnvelope, responseChunks, responseJson, StreamedAnswer, type JobResponse } from '../schemas/job-response.js';
import type { JobEvent, StreamEvent } from '../schemas/events.js';
import { check } from '../schemas/validator.js';
import { describeError, HttpError, OPEN_SERVICE_NOTE } from '../core/errors.js';
import type { Forwarder } from './target-forwarder.js';
import { createJobContext } from '../core/job.js';
import { createSharingJobContext } from '../core/shared-events.js';
import { tagFor, type Caller } from './token-scopes.js';
import type { IncomingRequest, ResponseSink } from './http.js';
import type { RegisteredJob } from '../core/registry.js';
import type { CallerTag } from '../core/caller.js';
import { readJson } from './json-body.js';
import { JSON_HEADERS, sendJson, writeAll } from './reply.js';
import { SseWriter } from './sse.js';

export interface JobRoutesOptions {
  forwarder: Forwarder;
  jsonLimit: number;
  shutdown: AbortSignal;
  /** Aborted when the service starts to stop: open SSE streams end at once with STOPPING. */
  stopping: AbortSignal;
}

const NO_TERMINAL = 'Stream produced no terminal result';
/** The last frame of a stream still open when the service stops. */
const STOPPING: StreamEvent = Object.freeze({ kind: 'result', answer: 'RuntimeError: the service is stopping; call again once it is back', success: false, metadata: {} });
const STOPPED = Symbol('stopped');

/**
 * Who waits for each `stopping` signal: one listener on the signal for all open streams, as
 * EventTarget's addEventListener takes time linear in the listeners already there (ten thousand
 * followers opening spent a sixth of their time in it).
 */
const stopWaiters = new WeakMap<AbortSignal, Set<() => void>>();

function onStopping(stopping: AbortSignal, onStop: () => void): () => void {
  let waiters = stopWaiters.get(stopping);
  if (!waiters) {
    const all = (waiters = new Set());
    stopWaiters.set(stopping, all);
    stopping.addEventListener('abort', () => all.forEach((stop) => stop()), { once: true });
  }
  waiters.add(onStop);
  return () => waiters.delete(onStop);
}

/** The work's value, or STOPPED as soon as `stopping` is aborted (the work is left to end on its own). */
function unlessStopping<T>(work: Promise<T>, stopping: AbortSignal): Promise<T | typeof STOPPED> {
  if (stopping.aborted) return Promise.resolve(STOPPED);
  return new Promise((resolve, reject) => {
    const forget = onStopping(stopping, () => resolve(STOPPED));
    work.then(resolve, reject).finally(forget);
  });
}
/** What a JSON or MCP caller gets when a Job returned no JobResponse. */
export const NO_RESULT: JobResponse = Object.freeze({ answer: 'RuntimeError: the Job produced no result', success: false, metadata: {} });

/**
 * The 422 for a body that holds the Job's parameters without the envelope (`{"text": "hi"}` for
 * `{"arguments": {"text": "hi"}}`), the commonest first call by hand: one issue, in the shape of
 * the validation list, that names the fix instead of one "extra field" per parameter.
 */
function missingEnvelope(body: unknown): HttpError | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Object.hasOwn(body, 'arguments')) return undefined;
  const fields = Object.keys(body).filter((key) => key !== 'target');
  if (fields.length === 0) return undefined;
  const shown = fields.slice(0, 5).map((f) => `${JSON.stringify(f)}: ...`).join(', ') + (fields.length > 5 ? ', ...' : '');
  const msg = `The Job's parameters go inside "arguments": send {"arguments": {${shown}}} instead of {${shown}} (the body's top level takes only "arguments" and "target")`;
  return new HttpError(422, [{ loc: ['body', 'arguments'], msg, type: 'missing_arguments_envelope' }]);
}

/** Parses and checks the request envelope (422 on anything but `arguments` and `target`). */
async function readEnvelope(req: IncomingRequest, limit: number): Promise<RequestEnvelope> {
  const body = await readJson(req, limit);
  const unwrapped = missingEnvelope(body);
  if (unwrapped) throw unwrapped;
  const parsed = check(RequestEnvelope, body ?? {}, { defaults: true, inPlace: true });
  if (!parsed.ok) throw new HttpError(422, parsed.issues.map((i) => ({ ...i, loc: ['body', ...i.loc] })));
  return parsed.value;
}

function targetOf(forwarder: Forwarder, envelope: RequestEnvelope): string | undefined {
  if (envelope.target === undefined) return undefined;
  const resolved = forwarder.resolve(envelope.target);
  if (!resolved) throw new HttpError(422, `target ${JSON.stringify(envelope.target)} is not one of the configured targets`);
  return resolved;
}

/**
 * The public Job a caller asked for: 404 `Unknown job` as the spec says for a Job that is not
 * public, 403 (audited) for one outside the caller's scope. Forwarded calls are checked too: a
 * scoped token reaches the same Jobs on a target as here.
 */
function jobFor(caller: Caller, name: string, tag: CallerTag): RegisteredJob | undefined {
  const entry = caller.registry.get(name);
  if (!entry && caller.registry.refuses(name)) throw caller.registry.refusal(name, tag);
  return entry;
}

/** `GET /jobs`: the catalog (of the Jobs the caller may call), local or of a configured target (`?target=`). */
export async function handleCatalog(req: IncomingRequest, res: ResponseSink, caller: Caller, opts: JobRoutesOptions): Promise<void> {
  const target = new URLSearchParams(req.query).get('target');
  if (target !== null) {
    const resolved = opts.forwarder.resolve(target);
    if (!resolved) throw new HttpError(422, `target ${JSON.stringify(target)} is not one of the configured targets`);
    const catalog = await opts.forwarder.catalog(resolved, AbortSignal.any([req.signal, opts.shutdown]));
    // A scoped token reaches on a target the Jobs its scope names here, and sees only those.
    const items = caller.unrestricted ? catalog.items : catalog.items.filter((item) => caller.registry.get(item.name) !== undefined);
    sendJson(res, 200, { answer: caller.unrestricted ? catalog : { items, total: items.length }, success: true, metadata: { token: caller.name } });
    return;
  }
  // metadata.token: the name of this service's token the caller used (never its value), so a console
  // can say who is signed in; the same for a target's catalog, whose scope is applied here.
  // An open service that hides Jobs needing a token says so (metadata.note), so an empty catalog is explained.
  const note = caller.registry.hidesTokenJobs ? { note: OPEN_SERVICE_NOTE } : {};
  sendJson(res, 200, { answer: caller.registry.catalog, success: true, metadata: { token: caller.name, ...note } });
}

/** `POST /jobs/{name}`: one JobResponse. */
export async function handleCall(req: IncomingRequest, res: ResponseSink, name: string, caller: Caller, opts: JobRoutesOptions): Promise<void> {
  const envelope = await readEnvelope(req, opts.jsonLimit);
  const tag = tagFor(caller, req, 'http');
  const entry = jobFor(caller, name, tag);
  const target = targetOf(opts.forwarder, envelope);
  if (target) {
    if (!caller.unrestricted && !entry) throw caller.registry.unknownJob(name);
    // The service's stop drops the forwarder's connections, so only the caller's signal is passed.
    const answer = await opts.forwarder.call(target, name, envelope.arguments, req.gone);
    if ('json' in answer) return res.send(200, JSON_HEADERS, answer.json);
    const out = res.stream(200, JSON_HEADERS);
    if (await writeAll(out, answer.stream, true)) out.end();
    return;
  }
  if (!entry) throw caller.registry.unknownJob(name);
  const { registry } = caller;
  const args = registry.prepare(entry, envelope.arguments);
  const ctx = createJobContext(() => [req.signal, opts.shutdown], false, undefined, tag);
  const response = (await registry.execute(entry, args, ctx)) ?? NO_RESULT;
  if (!(response.answer instanceof StreamedAnswer)) return res.send(200, JSON_HEADERS, responseJson(response));
  const out = res.stream(200, JSON_HEADERS);
  if (await writeAll(out, responseChunks(response))) out.end();
}


/** `POST /jobs/{name}/events`: SSE frames of the Job's events, ending with `result`. */
export async function handleEvents(req: IncomingRequest, res: ResponseSink, name: string, caller: Caller, opts: JobRoutesOptions): Promise<void> {
  const envelope = await readEnvelope(req, opts.jsonLimit);
  const tag = tagFor(caller, req, 'sse');
  const entry = jobFor(caller, name, tag);
  const target = targetOf(opts.forwarder, envelope);
  if (target) {
    if (!caller.unrestricted && !entry) throw caller.registry.unknownJob(name, true);
    // Validation and 4xx belong to the target, and reach the caller as such: the SSE response
    // starts only once the target has started its own.
    const events = await opts.forwarder.openStream(target, name, envelope.arguments, AbortSignal.any([req.signal, opts.stopping, opts.shutdown]));
    const sse = new SseWriter(res);
    try {
      for await (const event of events) {
        if (event.kind === 'result') return await sse.finish(event);
        if (!(await sse.send(event))) return; // the client left: leaving the loop closes upstream
      }
      await sse.finish({ kind: 'result', answer: NO_TERMINAL, success: false, metadata: {} });
    } catch (err) {
      await sse.finish(opts.stopping.aborted ? STOPPING : { kind: 'result', answer: describeError(err), success: false, metadata: {} });
    }
    return;
  }
  if (!entry || !entry.flags.enable_stream) throw caller.registry.unknownJob(name, true);
  const { registry } = caller;
  const args = registry.prepare(entry, envelope.arguments);
  const sse = new SseWriter(res);
  const ctx = createSharingJobContext(
    () => [req.signal, opts.stopping, opts.shutdown],
    async (event: JobEvent) => {
      await sse.send(event);
    },
    (events) => sse.sendShared(events),
    tag,
  );
  const response = await unlessStopping(registry.execute(entry, args, ctx, 'sse'), opts.stopping);
  if (response === STOPPED) return sse.finish(STOPPING);
  if (response?.answer instanceof StreamedAnswer) return sse.finishStreamed(responseChunks(response, '{"kind":"result",'));
  await sse.finish(response ? { kind: 'result', ...response } : { kind: 'result', answer: NO_TERMINAL, success: false, metadata: {} });
}
