import { basename } from 'node:path';
import type { PreviewAnswer } from '../../schemas/workspace.js';
import { previewCsv } from './csv.js';
import { previewMarkdown } from './markdown.js';
import { openInside } from './open-file.js';
import { previewParquet } from './parquet.js';
import { outcomeOf, type PoolOutcome } from './preview-failure.js';
import { csvDelimiterOf, previewKindOf } from './preview-kind.js';
import { previewStructured } from './structured.js';
import { previewText } from './text.js';

/** What the supervisor sends to a pool thread: a path it already resolved inside `root`. */
export interface PreviewRequest {
  /** Real path of the workspace root. */
  root: string;
  /** Real path of the file (symbolic links resolved, inside `root`). */
  real: string;
  /** The workspace-relative path, for messages. */
  path: string;
  offset: number;
  limit: number;
}

/** A preview or a business failure as data: error classes do not survive the thread boundary. */
export type PreviewOutcome = PoolOutcome<PreviewAnswer>;

async function preview(req: PreviewRequest, signal: AbortSignal): Promise<PreviewAnswer> {
  const name = basename(req.path);
  const kind = previewKindOf(name);
  const file = await openInside(req.root, req.real, req.path);
  try {
    const window = { offset: req.offset, limit: req.limit };
    switch (kind) {
      case 'text':
        return await previewText(file.handle, file.size);
      case 'markdown':
        return await previewMarkdown(file.handle, file.size);
      case 'json':
      case 'yaml':
        return await previewStructured(kind, file.handle, file.size);
      case 'csv':
        return await previewCsv(file.handle, file.size, window, csvDelimiterOf(name), signal);
      case 'parquet':
        return await previewParquet(file.reopenPath, file.size, window);
      case 'unsupported':
        return { kind: 'unsupported', size: file.size };
    }
  } finally {
    await file.handle.close();
  }
}

/** Pool handler of `preview`: never throws for business failures. */
export function runPreview(req: PreviewRequest, signal: AbortSignal): Promise<PreviewOutcome> {
  return outcomeOf(preview(req, signal));
}
