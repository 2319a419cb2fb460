/**
 * Checked messages between the processes of the Tasks engine (service, spawner, pooled runners),
 * as piscina checks its task map: each channel declares one map from a message's `type` to the
 * shape of its fields, and every message read is checked against it before it is used. A
 * malformed or unknown message comes back as a readable error (the receiver logs it and goes on),
 * never as a value of the wrong type. Fields a shape does not name are let through (a newer peer
 * may add some); the named ones are checked. The runner bundle imports this: node built-ins only.
 */

/** One field's check: what it expects (for the error) and the test. */
export interface Field<T> {
  readonly expects: string;
  test(value: unknown): value is T;
}

/** The field checks of one message kind (every field but `type`). */
export type Fields<M> = { readonly [F in Exclude<keyof M, 'type'>]-?: Field<M[F]> };

/** One channel's messages: each `type` to the checks of its fields. */
export type MessageMap<U extends { type: string }> = { readonly [K in U['type']]: Fields<Extract<U, { type: K }>> };

/** A message checked against its channel's map, or what was wrong with it. */
export type Checked<U> = { ok: true; message: U } | { ok: false; error: string };

const field = <T>(expects: string, test: (value: unknown) => boolean): Field<T> => ({ expects, test: test as (value: unknown) => value is T });

export const text = field<string>('a string', (v) => typeof v === 'string');
export const nonEmptyText = field<string>('a non-empty string', (v) => typeof v === 'string' && v.length > 0);
export const count = field<number>('a whole number >= 0', (v) => Number.isSafeInteger(v) && (v as number) >= 0);
export const processId = field<number>('a process id (a whole number > 0)', (v) => Number.isSafeInteger(v) && (v as number) > 0);
export const exitCode = field<number | null>('an exit code or null', (v) => v === null || Number.isSafeInteger(v));
export const signalName = field<NodeJS.Signals | null>('a signal name or null', (v) => v === null || (typeof v === 'string' && /^SIG[A-Z0-9+-]+$/.test(v)));
export const nullOnly = field<null>('null', (v) => v === null);
export const truth = field<boolean>('true or false', (v) => typeof v === 'boolean');
export const textOrNull = field<string | null>('a string or null', (v) => v === null || typeof v === 'string');
export const textRecord = field<Record<string, string>>('an object of strings', (v) => isObject(v) && Object.values(v).every((x) => typeof x === 'string'));
/** An object whose fields are all whole numbers >= 0 (TaskResources: cpus, gpus, memory_mb, time_limit_s). */
export const countRecord = <T extends object>(): Field<T> => field<T>('an object of whole numbers', (v) => isObject(v) && Object.values(v).every((x) => count.test(x)));

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for an error text: short, whatever it is. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/** The messages of one channel (`name` says which, in errors), checked against their map. */
export class MessageKinds<U extends { type: string }> {
  readonly #name: string;
  readonly #map: MessageMap<U>;

  constructor(name: string, map: MessageMap<U>) {
    this.#name = name;
    this.#map = map;
  }

  /** `value` as one of this channel's messages, or what is wrong with it. */
  check(value: unknown): Checked<U> {
    if (!isObject(value)) return this.#refused(`not an object: ${shown(value)}`);
    const { type } = value;
    if (typeof type !== 'string' || !Object.hasOwn(this.#map, type)) return this.#refused(`unknown type ${shown(type)}`);
    const fields = this.#map[type as U['type']] as Readonly<Record<string, Field<unknown>>>;
    for (const [name, check] of Object.entries(fields)) {
      if (!check.test(value[name])) return this.#refused(`${type}.${name} is ${shown(value[name])}, not ${check.expects}`);
    }
    return { ok: true, message: value as U };
  }

  /** One JSON line as one of this channel's messages, or what is wrong with it. */
  parse(line: string): Checked<U> {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      return this.#refused(`not JSON (${(err as Error).message}): ${shown(line)}`);
    }
    return this.check(value);
  }

  #refused(what: string): Checked<U> {
    return { ok: false, error: `a ${this.#name} message was refused: ${what}` };
  }
}

/**
 * Calls `onMessage` with each line read from `channel` that is one of `kinds`' messages; a line
 * that is not is passed to `onRefused` with what was wrong (the sender's exit then says how it went).
 */
export function onMessageLines<U extends { type: string }>(channel: NodeJS.ReadableStream, kinds: MessageKinds<U>, onMessage: (message: U) => void, onRefused: (error: string) => void): void {
  let pending = '';
  channel.setEncoding('utf8');
  channel.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const checked = kinds.parse(line);
      if (checked.ok) onMessage(checked.message);
      else onRefused(checked.error);
    }
  });
}
