import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_WORKSPACE, resolveWorkspace } from '../supervisor/workspace-path.js';
import { BusinessError } from '../supervisor/errors.js';
import { packSnapshot } from '../supervisor/snapshots/pack-snapshot.js';
import { EXIT, UsageError } from './cli-errors.js';
import { resolveConnection } from './connection.js';
import { callJob } from './job-client.js';
import { subCommand } from './sub-command.js';
import { printResponse } from './text-output.js';
import { uploadFile } from './upload-client.js';

const USAGE = `usage: taskyard sync push <task_id>... --target ADDRESS [--token TOKEN] [--workspace DIR]

Packs finished Tasks of the local workspace (--workspace, default ${DEFAULT_WORKSPACE}) into a
snapshot, uploads it to the target with POST /files and applies it there with sync_tasks, so the
results (status, log, metadata, artifacts) move between machines. The token is --token or
TASKYARD_TARGET_TOKEN (--url instead of --target uses TASKYARD_TOKEN). Prints sync_tasks's
JobResponse; exit code 0 when it succeeded.`;


/** `taskyard sync push <task_id>...`: returns the exit code. */
export function syncCommand(argv: string[]): Promise<number> {
  return subCommand(
    'taskyard sync',
    USAGE,
    argv,
    async ({ job: action, options, fields }) => {
      if (action !== 'push') throw new UsageError(action === undefined ? 'name an action' : `unknown action ${JSON.stringify(action)}`);
      if (!fields.length) throw new UsageError('name at least one Task ID to push');
      if (options.target === undefined && options.url === undefined) throw new UsageError('say where to push: --target ADDRESS (or --url URL)');
      const workspace = resolveWorkspace(options.workspace);
      const conn = await resolveConnection(options);
      const scratch = await mkdtemp(join(tmpdir(), 'taskyard-sync-'));
      try {
        const archive = join(scratch, 'tasks.tar.gz');
        await packSnapshot(workspace, fields, archive);
        const staged = await uploadFile(conn, archive);
        const response = await callJob(conn, 'sync_tasks', { path: staged.path });
        printResponse(response, options.output);
        return response.success ? EXIT.success : EXIT.failure;
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
    [BusinessError],
  );
}
