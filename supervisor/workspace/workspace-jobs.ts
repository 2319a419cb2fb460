import { Type } from '../../vendor/typebox.js';
import { ok } from '../../schemas/job-response.js';
import { DeletedEntry, PreviewAnswer, WORKSPACE_LIMITS, WorkspaceListing } from '../../schemas/workspace.js';
import { CSV_ROWS_LIMITS, CountCsvRowsInput, CsvRowCount } from '../../schemas/csv-rows.js';
import type { WorkerPool } from '../../workers/pool.js';
import { BusinessError, FileNotFoundError } from '../../core/errors.js';
import { READ_ONLY, defineJob } from '../../core/job.js';
import { deleteEntries } from './delete-entries.js';
import { listEntries } from './list-entries.js';
import { resolveClientPath } from './safe-path.js';
import { listTaskRuns } from './task-runs.js';

const closed = { additionalProperties: false } as const;

/** A client's path resolved inside `root` to an existing entry (the pool thread opens and checks it again). */
async function existingFile(root: string, path: string): Promise<{ root: string; real: string; path: string }> {
  const file = await resolveClientPath(root, path);
  if (!file.exists) throw new FileNotFoundError(`no such file: ${path}`);
  return { root, real: file.real, path: file.relative };
}

/** A pool outcome's answer, or its business failure thrown again with its type. */
function answerOf<A>(outcome: { ok: true; answer: A } | { ok: false; type: string; message: string }): A {
  if (!outcome.ok) throw new BusinessError(outcome.type, outcome.message);
  return outcome.answer;
}

/** The spec's four workspace Jobs over the workspace rooted at `root` (a real path), and count_csv_rows. */
export function workspaceJobs(root: string, pool: WorkerPool) {
  return [
    defineJob({
      name: 'list_entries',
      output: WorkspaceListing,
      description:
        'Lists one level of a workspace directory: directories first, then files by name, at most 5000 entries (`truncated` tells). ' +
        'Each entry has name, path, kind (file, directory, symlink, other), preview_kind, supported, size (bytes, null for non-files) and modified_at.',
      input: Type.Object({ path: Type.Optional(Type.String({ default: '', description: 'Directory relative to the workspace; empty for the root' })) }, closed),
      annotations: READ_ONLY,
      run: async (args) => ok(await listEntries(root, args.path ?? '')),
    }),
    defineJob({
      name: 'list_task_runs',
      output: WorkspaceListing,
      description: 'Lists the finished runs of a task type: task directories under `<task_type>/` that hold a metadata.json.',
      input: Type.Object(
        { task_type: Type.String({ minLength: 1, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$', description: 'Task type (a directory name, not a registration name)' }) },
        closed,
      ),
      annotations: READ_ONLY,
      run: async (args) => ok(await listTaskRuns(root, args.task_type)),
    }),
    defineJob({
      name: 'preview_file',
      output: PreviewAnswer,
      description:
        'Previews a workspace file by extension: text, markdown (with YAML frontmatter), json, yaml, csv, parquet or unsupported. ' +
        'Text reads at most 512 KiB; JSON/YAML over 32 MiB or malformed give a non-null parse_error with success true; offset/limit page CSV and Parquet rows.',
      input: Type.Object(
        {
          path: Type.String({ description: 'File relative to the workspace' }),
          offset: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'First data row (CSV, Parquet)' })),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: WORKSPACE_LIMITS.previewRowsMax, default: WORKSPACE_LIMITS.previewRowsDefault, description: 'Rows to return (CSV, Parquet)' }),
          ),
        },
        closed,
      ),
      annotations: READ_ONLY,
      run: async (args, ctx) => {
        const request = { ...(await existingFile(root, args.path)), offset: args.offset ?? 0, limit: args.limit ?? WORKSPACE_LIMITS.previewRowsDefault };
        return ok(answerOf(await pool.run('preview', request, ctx.signal)));
      },
    }),
    defineJob({
      name: 'count_csv_rows',
      output: CsvRowCount,
      description:
        'Counts the data rows of a workspace .csv or .tsv file as preview_file pages them: the header and empty lines are not rows, and a quoted field may span lines. ' +
        `Scans at most max_bytes (default 1 GiB) and ${CSV_ROWS_LIMITS.seconds} seconds; past either, rows is a lower bound and exact is false. ` +
        'Paths are checked like preview_file: inside the workspace, regular files only.',
      input: CountCsvRowsInput,
      annotations: READ_ONLY,
      run: async (args, ctx) => {
        const request = { ...(await existingFile(root, args.path)), maxBytes: args.max_bytes ?? CSV_ROWS_LIMITS.defaultBytes, maxMs: CSV_ROWS_LIMITS.seconds * 1000 };
        return ok(answerOf(await pool.run('csv-rows', request, ctx.signal)));
      },
    }),
    defineJob({
      name: 'delete_entries',
      output: Type.Array(DeletedEntry),
      description: 'Deletes workspace files and directories (1-200 paths) and answers what was deleted. The root and paths outside the workspace are refused; missing paths are skipped.',
      input: Type.Object({ paths: Type.Array(Type.String(), { minItems: 1, maxItems: WORKSPACE_LIMITS.deleteBatch }) }, closed),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
      run: async (args) => ok(await deleteEntries(root, args.paths)),
    }),
  ];
}
