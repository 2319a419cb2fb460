/**
 * Checks a JobResponse as its bytes pass by, without keeping them: one JSON value (RFC 8259
 * syntax), an object, with a boolean `success` among its own keys. A forwarded answer too large
 * to hold is passed on while it arrives; this check lets the forwarder end it as broken at the
 * first byte that is not JSON, instead of handing on an answer no client can parse. UTF-8 is not
 * checked (a decoder replaces bad sequences), and a key spelled with escapes is not recognised as
 * `success`.
 *
 * A table-driven automaton: one lookup per byte, with the few transitions that need the nesting
 * stack or the top-level keys (brackets, commas, keys, the `success` value) as actions; inside a
 * string value, past its first few plain bytes, runs of them are skipped four at a time (`skipPlain`).
 */

// States (below ACTION). Each has a row of 256 next states in TABLE.
const START = 1; // before the top-level object
const VALUE = 2;
const VALUE_SUCCESS = 3; // the value of the top-level `success`: true or false only
const FIRST_KEY_OR_END = 4;
const KEY = 5;
const COLON = 6;
const COLON_SUCCESS = 7;
const FIRST_VALUE_OR_END = 8;
const AFTER = 9; // after a value inside a container
const DONE = 10; // after the top-level object: whitespace only
const STR = 11; // a string value, its escapes, \u digits
const STR_ESC = 12;
const STR_U = 13; // 13..16: \u digits still owed 4..1
const KEY_STR = 17;
const KEY_ESC = 18;
const KEY_U = 19; // 19..22
const T_R = 23; // literals: the letters still owed
const T_U = 24;
const T_E = 25;
const F_A = 26;
const F_L = 27;
const F_S = 28;
const F_E = 29;
const N_U = 30;
const N_L = 31;
const N_L2 = 32;
const MINUS = 33; // numbers, by the part being read
const ZERO = 34;
const INT = 35;
const DOT = 36;
const FRAC = 37;
const EXP = 38;
const EXP_SIGN = 39;
const EXP_DIGITS = 40;
/** 41..48: a string value's first plain bytes (and those after an escape), stepped by the table; STR, where runs are skipped, follows. */
const STR_WARM = 41;
const WARM_STEPS = 8;
const STATES = STR_WARM + WARM_STEPS;

// Actions: transitions handled in code.
const ACTION = 192;
const FAIL = 192;
const OPEN_OBJECT = 193;
const OPEN_ARRAY = 194;
const CLOSE_OBJECT = 195;
const CLOSE_ARRAY = 196;
const COMMA = 197;
const KEY_START = 198;
const KEY_END = 199;
const SUCCESS_TRUE = 200;
const SUCCESS_FALSE = 201;
/** A plain byte of a string value past its warm-up: the run it starts is skipped (`skipPlain`). */
const SKIP = 202;

const TABLE = buildTable();

function buildTable(): Uint8Array {
  const table = new Uint8Array(STATES * 256).fill(FAIL);
  const set = (state: number, bytes: string | number[], next: number) => {
    for (const b of typeof bytes === 'string' ? [...bytes].map((ch) => ch.charCodeAt(0)) : bytes) table[state * 256 + b] = next;
  };
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);
  const space = ' \t\r\n';
  const digits = '0123456789';
  const hex = '0123456789abcdefABCDEF';
  const valueStart = (state: number) => {
    set(state, space, state);
    set(state, '{', OPEN_OBJECT);
    set(state, '[', OPEN_ARRAY);
    set(state, '"', STR_WARM);
    set(state, 't', T_R);
    set(state, 'f', F_A);
    set(state, 'n', N_U);
    set(state, '-', MINUS);
    set(state, '0', ZERO);
    set(state, '123456789', INT);
  };
  /** What may end a value inside a container. */
  const valueEnd = (state: number) => {
    set(state, space, AFTER);
    set(state, ',', COMMA);
    set(state, '}', CLOSE_OBJECT);
    set(state, ']', CLOSE_ARRAY);
  };
  set(START, space, START);
  set(START, '{', OPEN_OBJECT);
  valueStart(VALUE);
  valueStart(FIRST_VALUE_OR_END);
  set(FIRST_VALUE_OR_END, ']', CLOSE_ARRAY);
  set(VALUE_SUCCESS, space, VALUE_SUCCESS);
  set(VALUE_SUCCESS, 't', SUCCESS_TRUE);
  set(VALUE_SUCCESS, 'f', SUCCESS_FALSE);
  for (const state of [FIRST_KEY_OR_END, KEY]) {
    set(state, space, state);
    set(state, '"', KEY_START);
  }
  set(FIRST_KEY_OR_END, '}', CLOSE_OBJECT);
  set(COLON, space, COLON);
  set(COLON, ':', VALUE);
  set(COLON_SUCCESS, space, COLON_SUCCESS);
  set(COLON_SUCCESS, ':', VALUE_SUCCESS);
  set(AFTER, space, AFTER);
  valueEnd(AFTER);
  set(DONE, space, DONE);
  // After an escape a string value warms up again: a string of short runs between escapes never pays for a skip.
  for (const [str, esc, u, end, resume] of [[STR, STR_ESC, STR_U, AFTER, STR_WARM], [KEY_STR, KEY_ESC, KEY_U, KEY_END, KEY_STR]] as const) {
    set(str, range(0x20, 0xff), str);
    set(str, '"', end);
    set(str, '\\', esc);
    set(esc, '"\\/bfnrt', resume);
    set(esc, 'u', u);
    for (let k = 0; k < 4; k++) set(u + k, hex, k === 3 ? resume : u + k + 1);
  }
  for (let k = 0; k < WARM_STEPS; k++) {
    set(STR_WARM + k, range(0x20, 0xff), k === WARM_STEPS - 1 ? SKIP : STR_WARM + k + 1);
    set(STR_WARM + k, '"', AFTER);
    set(STR_WARM + k, '\\', STR_ESC);
  }
  for (const [state, letter, next] of [[T_R, 'r', T_U], [T_U, 'u', T_E], [T_E, 'e', AFTER], [F_A, 'a', F_L], [F_L, 'l', F_S], [F_S, 's', F_E], [F_E, 'e', AFTER], [N_U, 'u', N_L], [N_L, 'l', N_L2], [N_L2, 'l', AFTER]] as const) {
    set(state, letter, next);
  }
  // STR is where a skip stops (or a chunk ended inside one): its next plain byte starts another.
  set(STR, range(0x20, 0xff), SKIP);
  set(STR, '"', AFTER);
  set(STR, '\\', STR_ESC);
  set(MINUS, '0', ZERO);
  set(MINUS, '123456789', INT);
  for (const state of [ZERO, INT, FRAC]) {
    set(state, 'eE', EXP);
    valueEnd(state);
  }
  set(ZERO, '.', DOT);
  set(INT, '.', DOT);
  set(INT, digits, INT);
  set(DOT, digits, FRAC);
  set(FRAC, digits, FRAC);
  set(EXP, '+-', EXP_SIGN);
  set(EXP, digits, EXP_DIGITS);
  set(EXP_SIGN, digits, EXP_DIGITS);
  set(EXP_DIGITS, digits, EXP_DIGITS);
  valueEnd(EXP_DIGITS);
  return table;
}

/** Runs of string bytes shorter than this are stepped byte by byte: a word view is not worth making. */
const WORD_RUN = 32;
const NO_WORDS = new Int32Array(0);

/**
 * The index of the first byte at or after `i` that a string value cannot simply hold (a control
 * character, `"` or `\`), or the chunk's length. Past the first WORD_RUN bytes, four at a time
 * (SWAR): a word has a byte below 0x20 when `(x - 0x20202020) & ~x & 0x80808080` is not zero, a
 * byte equal to b when that test for "below 1" holds for `x ^ b*0x01010101`; the byte itself is
 * then found one at a time.
 */
function skipPlain(chunk: Uint8Array, i: number): number {
  const n = chunk.length;
  const stop = Math.min(n, i + WORD_RUN);
  for (; i < stop; i++) {
    const b = chunk[i]!;
    if (b < 0x20 || b === 0x22 || b === 0x5c) return i;
  }
  if (i === n) return n;
  // Words from the first 4-byte-aligned address on; the bytes after the last whole word are stepped.
  const first = Math.min(n, i + ((4 - ((chunk.byteOffset + i) & 3)) & 3));
  for (; i < first; i++) {
    const b = chunk[i]!;
    if (b < 0x20 || b === 0x22 || b === 0x5c) return i;
  }
  const count = (n - first) >> 2;
  const words = count > 0 ? new Int32Array(chunk.buffer, chunk.byteOffset + first, count) : NO_WORDS;
  let w = 0;
  for (; w < count; w++) {
    const x = words[w]!;
    const quote = x ^ 0x22222222;
    const backslash = x ^ 0x5c5c5c5c;
    if ((((x - 0x20202020) & ~x) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080) break;
  }
  for (i = first + 4 * w; i < n; i++) {
    const b = chunk[i]!;
    if (b < 0x20 || b === 0x22 || b === 0x5c) return i;
  }
  return n;
}

const OBJECT = 1;
const ARRAY = 2;
/** Deeper nesting is refused (a target's answer never needs it; each level costs a byte here). */
export const MAX_DEPTH = 100_000;
const SUCCESS = Buffer.from('success');

/** A JobResponse that turned out broken while streaming. */
export class JsonStreamError extends Error {
  override name = 'JsonStreamError';
}

/** Feed every chunk in order, then call `end`; either throws JsonStreamError once the bytes cannot be a JobResponse. */
export class JobResponseCheck {
  #state = START;
  #stack = new Uint8Array(64);
  #depth = 0;
  /** Bytes of the answer before the current chunk (for messages). */
  #offset = 0;
  /** Where the top-level key being read started in the current chunk (-1: not a top-level key). */
  #keyStart = -1;
  /** Its bytes from earlier chunks (a key rarely spans two). */
  #keyCarry: Buffer | null = null;
  #sawSuccess = false;

  feed(chunk: Uint8Array): void {
    const n = chunk.length;
    let state = this.#state;
    for (let i = 0; i < n; i++) {
      const next = TABLE[(state << 8) | chunk[i]!]!;
      if (next < ACTION) state = next;
      else if (next === SKIP) {
        // Most of a large answer is string bytes: past a string's first WARM_STEPS plain bytes,
        // they are skipped a word at a time; the byte that ends the run is stepped in STR.
        i = skipPlain(chunk, i + 1) - 1;
        state = STR;
      } else state = this.#act(next, state, chunk, i);
    }
    this.#state = state;
    if (this.#keyStart >= 0 && state >= KEY_STR && state <= KEY_U + 3) {
      const piece = Buffer.from(chunk.buffer, chunk.byteOffset + this.#keyStart, n - this.#keyStart);
      this.#keyCarry = this.#keyCarry ? Buffer.concat([this.#keyCarry, piece.subarray(0, SUCCESS.length + 1)]) : Buffer.from(piece.subarray(0, SUCCESS.length + 1));
      this.#keyStart = 0;
    }
    this.#offset += n;
  }

  /** The answer ended: throws unless it was one complete JSON object with a boolean `success`. */
  end(): void {
    if (this.#state !== DONE) throw new JsonStreamError(`the answer ended inside its JSON (after ${this.#offset} bytes)`);
    if (!this.#sawSuccess) throw new JsonStreamError('the answer is JSON but not a JobResponse (no boolean "success")');
  }

  /** A transition that needs more than the table: answers the next state, or throws. */
  #act(action: number, state: number, chunk: Uint8Array, i: number): number {
    switch (action) {
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (this.#depth === MAX_DEPTH) return this.#fail(i, `nesting deeper than ${MAX_DEPTH} levels`);
        if (this.#depth === this.#stack.length) {
          const grown = new Uint8Array(this.#stack.length * 2);
          grown.set(this.#stack);
          this.#stack = grown;
        }
        this.#stack[this.#depth++] = action === OPEN_OBJECT ? OBJECT : ARRAY;
        return action === OPEN_OBJECT ? FIRST_KEY_OR_END : FIRST_VALUE_OR_END;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (this.#stack[this.#depth - 1] !== (action === CLOSE_OBJECT ? OBJECT : ARRAY)) return this.#fail(i, 'a closing bracket that matches nothing');
        return --this.#depth === 0 ? DONE : AFTER;
      case COMMA:
        return this.#stack[this.#depth - 1] === OBJECT ? KEY : VALUE;
      case KEY_START:
        this.#keyStart = this.#depth === 1 ? i + 1 : -1;
        this.#keyCarry = null;
        return KEY_STR;
      case KEY_END:
        return this.#keyStart >= 0 && this.#isSuccess(chunk, i) ? COLON_SUCCESS : COLON;
      case SUCCESS_TRUE:
      case SUCCESS_FALSE:
        this.#sawSuccess = true;
        return action === SUCCESS_TRUE ? T_R : F_A;
      default:
        return this.#fail(i, WHY[state] ?? 'a byte that JSON does not allow here');
    }
  }

  /** Whether the top-level key ending at `chunk[end]` is `success`, spelled plainly. */
  #isSuccess(chunk: Uint8Array, end: number): boolean {
    const start = this.#keyStart;
    this.#keyStart = -1;
    const carry = this.#keyCarry;
    const length = (carry?.length ?? 0) + end - start;
    if (length !== SUCCESS.length) return false;
    const tail = Buffer.from(chunk.buffer, chunk.byteOffset + start, end - start);
    return SUCCESS.equals(carry ? Buffer.concat([carry, tail]) : tail);
  }

  #fail(i: number, what: string): never {
    throw new JsonStreamError(`the answer is not valid JSON: ${what} at byte ${this.#offset + i}`);
  }
}

/** What went wrong, by the state a refused byte came in. */
const WHY: Record<number, string> = {
  [START]: 'a top-level value that is not an object',
  [VALUE_SUCCESS]: 'a "success" that is not a boolean',
  [DONE]: 'bytes after the JSON value',
  [STR]: 'a control character inside a string',
  ...Object.fromEntries(Array.from({ length: WARM_STEPS }, (_, k) => [STR_WARM + k, 'a control character inside a string'])),
  [KEY_STR]: 'a control character inside a key',
  [STR_ESC]: 'an invalid escape',
  [KEY_ESC]: 'an invalid escape',
  [COLON]: 'no colon after a key',
  [AFTER]: 'no comma or closing bracket after a value',
};
