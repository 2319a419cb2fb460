import type { FileHandle } from 'node:fs/promises';
import type { DocumentOptions, ParseOptions, SchemaOptions, ToJSOptions } from 'yaml';
import { parse as parseYaml } from '../../vendor/yaml.js';
import { WORKSPACE_LIMITS, type StructuredPreview } from '../../schemas/workspace.js';
import { depthExceeds } from '../../core/json-depth.js';
import { readPrefix } from './open-file.js';
import { utf8SafeLength } from '../../core/utf8-cut.js';
import { readTextWindow } from './text.js';

/**
 * YAML loading without surprises: the plain core schema (no custom tags, nothing executed),
 * few aliases (an alias bomb fails instead of expanding), plain objects only.
 */
export const SAFE_YAML: ParseOptions & DocumentOptions & SchemaOptions & ToJSOptions = Object.freeze({
  schema: 'core',
  maxAliasCount: 50,
  merge: false,
  uniqueKeys: true,
  customTags: [],
});

/** Deeper data cannot be cloned to the main thread or stringified into an answer. */
const MAX_DATA_DEPTH = 256;

function parse(kind: 'json' | 'yaml', text: string): unknown {
  return kind === 'json' ? JSON.parse(text.replace(/^\uFEFF/, '')) : parseYaml(text, SAFE_YAML);
}

/**
 * JSON / YAML preview: the text (up to 512 KiB) plus the parsed data of the whole file. Bad
 * content or a file over 32 MiB is not a failure: `data` is null and `parse_error` says why.
 */
export async function previewStructured(kind: 'json' | 'yaml', handle: FileHandle, size: number): Promise<StructuredPreview> {
  const limit = WORKSPACE_LIMITS.structuredParseBytes;
  if (size > limit) {
    const { content, truncated } = await readTextWindow(handle, size);
    const parse_error = `file is ${size} bytes, over the ${limit / 1024 / 1024} MiB parse limit`;
    return { kind, size, content, data: null, parse_error, truncated };
  }
  const bytes = await readPrefix(handle, size);
  const textLimit = WORKSPACE_LIMITS.textBytes;
  const truncated = bytes.length > textLimit;
  const content = new TextDecoder().decode(truncated ? bytes.subarray(0, utf8SafeLength(bytes.subarray(0, textLimit))) : bytes);
  let data: unknown = null;
  let parse_error: string | null = null;
  try {
    data = parse(kind, new TextDecoder().decode(bytes));
    if (depthExceeds(data, MAX_DATA_DEPTH)) {
      data = null;
      parse_error = `data is nested deeper than ${MAX_DATA_DEPTH} levels`;
    }
  } catch (err) {
    parse_error = (err as Error).message;
  }
  return { kind, size, content, data: data ?? null, parse_error, truncated };
}
