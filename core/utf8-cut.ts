/**
 * Cutting UTF-8 bytes without splitting a character (a split one decodes to U+FFFD). Shell
 * output caps, text previews and Task log windows all cut this one way.
 */

/** True for a UTF-8 continuation byte (10xxxxxx): never the first byte of a character. */
export const isUtf8Continuation = (byte: number): boolean => (byte & 0xc0) === 0x80;

/**
 * Length of the longest prefix of `bytes` that does not end inside a UTF-8 character: `bytes`
 * whole when its last character is complete, else up to that character's lead byte.
 */
export function utf8SafeLength(bytes: Uint8Array): number {
  const end = bytes.length;
  // A character is at most 4 bytes: look back at most 3 continuation bytes for its lead byte.
  for (let i = end - 1; i >= 0 && i >= end - 4; i--) {
    const byte = bytes[i]!;
    if (isUtf8Continuation(byte)) continue;
    // 0xf8-0xff never start a character: a stray byte, kept like ASCII rather than held back.
    const width = byte < 0xc0 || byte >= 0xf8 ? 1 : byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return i + width <= end ? end : i;
  }
  return end;
}
