import type { Static } from '@sinclair/typebox';
import { Type } from '../vendor/typebox.js';

/** Wire resources of the workspace Jobs and `/files` (spec: WorkspaceListing, Preview answers, DeletedEntry, FileCopy). */

export const PREVIEW_KINDS = ['text', 'markdown', 'json', 'yaml', 'csv', 'parquet', 'unsupported'] as const;
export const PreviewKind = Type.Union(PREVIEW_KINDS.map((k) => Type.Literal(k)));
export type PreviewKind = Static<typeof PreviewKind>;

export const ENTRY_KINDS = { file: 'file', directory: 'directory', symlink: 'symlink', other: 'other' } as const;

/**
 * One item of a listing. `kind` describes what the path leads to: a symbolic link that resolves
 * inside the workspace is reported as its target's kind; `symlink` marks one that is dangling,
 * loops or leads outside (it cannot be opened through the service). `size` is null for anything
 * but a file; `preview_kind` is null for anything but a file.
 */
export const WorkspaceEntry = Type.Object({
  name: Type.String(),
  path: Type.String({ description: 'Workspace-relative path with `/` separators' }),
  kind: Type.Union(Object.values(ENTRY_KINDS).map((k) => Type.Literal(k))),
  preview_kind: Type.Union([PreviewKind, Type.Null()]),
  supported: Type.Boolean({ description: 'True when preview_file shows content for this entry' }),
  size: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  modified_at: Type.String({ format: 'date-time' }),
});
export type WorkspaceEntry = Static<typeof WorkspaceEntry>;

export const WorkspaceListing = Type.Object({
  path: Type.String({ description: 'Workspace-relative; empty string is the root' }),
  entries: Type.Array(WorkspaceEntry),
  truncated: Type.Boolean(),
});
export type WorkspaceListing = Static<typeof WorkspaceListing>;

const Size = Type.Integer({ minimum: 0, description: 'File size in bytes' });

export const TextPreview = Type.Object({ kind: Type.Literal('text'), size: Size, content: Type.String(), truncated: Type.Boolean() });
export const MarkdownPreview = Type.Object({
  kind: Type.Literal('markdown'),
  size: Size,
  content: Type.String({ description: 'The document body after any frontmatter block' }),
  frontmatter: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  frontmatter_error: Type.Union([Type.String(), Type.Null()]),
  truncated: Type.Boolean(),
});
export const StructuredPreview = Type.Object({
  kind: Type.Union([Type.Literal('json'), Type.Literal('yaml')]),
  size: Size,
  content: Type.String(),
  data: Type.Unknown(),
  parse_error: Type.Union([Type.String(), Type.Null()]),
  truncated: Type.Boolean(),
});
const CsvFields = {
  size: Size,
  columns: Type.Array(Type.String()),
  rows: Type.Array(Type.Array(Type.Unknown())),
  offset: Type.Integer({ minimum: 0 }),
  limit: Type.Integer({ minimum: 1 }),
  has_more: Type.Boolean(),
};
export const CsvPreview = Type.Object({ kind: Type.Literal('csv'), ...CsvFields });
export const ColumnSchema = Type.Object({ name: Type.String(), type: Type.String(), nullable: Type.Boolean() });
export const ParquetPreview = Type.Object({
  kind: Type.Literal('parquet'),
  ...CsvFields,
  column_schema: Type.Array(ColumnSchema),
  row_count: Type.Integer({ minimum: 0 }),
  row_group_count: Type.Integer({ minimum: 0 }),
});
export const UnsupportedPreview = Type.Object({ kind: Type.Literal('unsupported'), size: Size });

export const PreviewAnswer = Type.Union([TextPreview, MarkdownPreview, StructuredPreview, CsvPreview, ParquetPreview, UnsupportedPreview]);
export type TextPreview = Static<typeof TextPreview>;
export type MarkdownPreview = Static<typeof MarkdownPreview>;
export type StructuredPreview = Static<typeof StructuredPreview>;
export type CsvPreview = Static<typeof CsvPreview>;
export type ParquetPreview = Static<typeof ParquetPreview>;
export type ColumnSchema = Static<typeof ColumnSchema>;
export type PreviewAnswer = Static<typeof PreviewAnswer>;

export const DeletedEntry = Type.Object({
  deleted: Type.String({ description: 'Workspace-relative path' }),
  kind: Type.Union([Type.Literal('file'), Type.Literal('directory')]),
});
export type DeletedEntry = Static<typeof DeletedEntry>;

export const FileCopy = Type.Object({
  path: Type.String({ description: 'tmp/[dir/]<sha256>/<filename>' }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  size: Type.Integer({ minimum: 0 }),
});
export type FileCopy = Static<typeof FileCopy>;

/** Spec limits of the workspace Jobs, in one place. */
export const WORKSPACE_LIMITS = Object.freeze({
  listingEntries: 5000,
  textBytes: 512 * 1024,
  structuredParseBytes: 32 * 1024 * 1024,
  previewRowsDefault: 200,
  previewRowsMax: 5000,
  deleteBatch: 200,
});

/** One entry `move_entries` moved or copied (beyond the spec). */
export const MovedEntry = Type.Object({
  from: Type.String({ description: 'Workspace-relative source' }),
  to: Type.String({ description: 'Workspace-relative destination' }),
  kind: Type.Union([Type.Literal('file'), Type.Literal('directory')]),
});
export type MovedEntry = Static<typeof MovedEntry>;
