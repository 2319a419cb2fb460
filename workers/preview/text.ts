import type { FileHandle } from 'node:fs/promises';
import { utf8SafeLength } from '../../core/utf8-cut.js';
import { WORKSPACE_LIMITS, type TextPreview } from '../../schemas/workspace.js';
import { readPrefix } from './open-file.js';

const decoder = new TextDecoder('utf-8');

/**
 * Decodes at most the text limit (512 KiB) from the start of a file, cut on a character boundary
 * when the file is longer. Invalid bytes become U+FFFD rather than failing the preview.
 */
export async function readTextWindow(handle: FileHandle, size: number): Promise<{ content: string; truncated: boolean }> {
  const limit = WORKSPACE_LIMITS.textBytes;
  const bytes = await readPrefix(handle, Math.min(size, limit + 1) || 1);
  const truncated = bytes.length > limit;
  const kept = truncated ? bytes.subarray(0, utf8SafeLength(bytes.subarray(0, limit))) : bytes;
  return { content: decoder.decode(kept), truncated };
}

/** Text preview: content up to 512 KiB. */
export async function previewText(handle: FileHandle, size: number): Promise<TextPreview> {
  return { kind: 'text', size, ...(await readTextWindow(handle, size)) };
}
