const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const SPACE = 0x20;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const TAB = 0x09;

/**
 * Counts the values of a JSON text as its bytes arrive, chunk by chunk, without parsing it: the
 * top-level value, one more for each `,` outside strings, and one for the first element or member
 * of each array or object that is not empty (an object member counts as one value, its key is
 * not counted). The cost of parsing, validating and cloning a body grows with its values far more
 * than with its bytes: a 16 MiB `[{},{},…]` (5.6 million objects) held the event loop for
 * seconds, while a 16 MiB string takes milliseconds. Strings are skipped with `indexOf`
 * (native), so a large text costs little; the byte loop runs only over structure, which a body
 * of few values has little of. Whether the text is valid JSON is left to the parser.
 */
export class JsonValueCounter {
  #count = 1;
  #inString = false;
  /** The chunk before ended on a backslash inside a string: the next byte is escaped. */
  #escaped = false;
  /** An array or object was just opened: whether it is empty shows at the next byte that is not blank. */
  #opened = false;

  constructor(private readonly limit: number) {}

  get count(): number {
    return this.#count;
  }

  /** Counts the values `bytes` start; false once more than the limit have been seen (it stops there). */
  feed(bytes: Uint8Array): boolean {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const end = buf.length;
    let i = 0;
    if (end === 0) return this.#count <= this.limit;
    if (this.#escaped) {
      this.#escaped = false;
      i = 1;
    }
    let count = this.#count;
    const limit = this.limit;
    let inString = this.#inString;
    let opened = this.#opened;
    /** The next backslash at or after i in a string (recomputed once passed); -1 none. */
    let slash = -2;
    while (i < end) {
      if (inString) {
        const quote = buf.indexOf(QUOTE, i);
        if (slash !== -1 && slash < i) slash = buf.indexOf(BACKSLASH, i);
        if (slash !== -1 && (quote === -1 || slash < quote)) {
          // An escape: the byte after the backslash is never the string's end.
          if (slash + 1 >= end) this.#escaped = true;
          i = slash + 2;
          continue;
        }
        if (quote === -1) break;
        inString = false;
        i = quote + 1;
        continue;
      }
      const b = buf[i++]!;
      if (opened) {
        if (b === SPACE || b === NEWLINE || b === RETURN || b === TAB) continue;
        opened = false;
        if (b !== CLOSE_ARRAY && b !== CLOSE_OBJECT && ++count > limit) break;
      }
      if (b === QUOTE) inString = true;
      else if (b === COMMA) {
        if (++count > limit) break;
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) opened = true;
    }
    this.#count = count;
    this.#inString = inString;
    this.#opened = opened;
    return count <= limit;
  }
}
