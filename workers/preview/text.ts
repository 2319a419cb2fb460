import type { FileHandle } from 'node:fs/promises';
import { WORKSPACE_LIMITS, type TextPreview } from '../../schemas/workspace.js';
import { readPrefix } from './open-file.js';

/** The last index at which `bytes` can be cut without splitting a UTF-8 sequence. */
export function utf8Boundary(bytes: Uint8Array): number {
  let lead = bytes.length - 1;
  // Step back over at most three continuation bytes (10xxxxxx) to the sequence's lead byte.
  while (lead >= 0 && lead > bytes.length - 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return bytes.length;
  const b = bytes[lead]!;
  const width = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + width > bytes.length ? lead : bytes.length;
}

const decoder = new TextDecoder('utf-8');

/**
 * Decodes at most the text limit (512 KiB) from the start of a file, cut on a character boundary
 * when the file is longer. Invalid bytes become U+FFFD rather than failing the preview.
 */
export async function readTextWindow(handle: FileHandle, size: number): Promise<{ content: string; truncated: boolean }> {
  const limit = WORKSPACE_LIMITS.textBytes;
  const bytes = await readPrefix(handle, Math.min(size, limit + 1) || 1);
  const truncated = bytes.length > limit;
  const kept = truncated ? bytes.subarray(0, utf8Boundary(bytes.subarray(0, limit))) : bytes;
  return { content: decoder.decode(kept), truncated };
}

/** Text preview: content up to 512 KiB. */
export async function previewText(handle: FileHandle, size: number): Promise<TextPreview> {
  return { kind: 'text', size, ...(await readTextWindow(handle, size)) };
}
