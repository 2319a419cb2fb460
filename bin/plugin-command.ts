import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BusinessError } from '../core/errors.js';
import type { GlobalOptions } from './cli-args.js';
import { EXIT, UsageError } from './cli-errors.js';
import { resolveConnection } from './connection.js';
import { callJob } from './job-client.js';
import type { JobResponse } from '../schemas/job-response.js';
import { isDirectory, packDirectory } from './pack-directory.js';
import { initPlugin } from './plugin-init.js';
import { initPythonPlugin } from './plugin-init-python.js';
import { subCommand } from './sub-command.js';
import { printResponse } from './text-output.js';
import { uploadFile } from './upload-client.js';

const USAGE = `usage: taskyard plugin install <package.tgz | package-dir> [--target ADDRESS | --url URL] [--token TOKEN]
       taskyard plugin uninstall NAME [options]
       taskyard plugin list [options]
       taskyard plugin init NAME [--python]

install    uploads a plugin tarball (made by npm pack; a package directory is packed with npm pack
           first) with POST /files, then calls install_plugin with the staged path and its sha256;
           a plugin whose taskyard.tasks is a manifest (taskyard.yaml) installs as it is
uninstall  calls uninstall_plugin (refused while one of the plugin's Tasks is queued or running)
list       calls list_plugins
init       writes a TypeScript plugin with one example Task and a test into ./NAME; with
           --python, a plugin whose Task is a Python script declared in taskyard.yaml (no build)

--target acts on that service directly, with --token or TASKYARD_TARGET_TOKEN. Prints the Job's
JobResponse (--output text: a summary); exit code 0 when it succeeded.`;

/** Uploads a tarball (packing a directory first) and installs it. */
async function install(path: string, options: GlobalOptions): Promise<JobResponse> {
  const conn = await resolveConnection(options);
  const scratch = (await isDirectory(path)) ? await mkdtemp(join(tmpdir(), 'taskyard-pack-')) : undefined;
  try {
    const tarball = scratch ? await packDirectory(path, scratch) : path;
    const staged = await uploadFile(conn, tarball);
    return await callJob(conn, 'install_plugin', { path: staged.path, sha256: staged.sha256 });
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

/** `taskyard plugin install|uninstall|list|init`: returns the exit code. */
export function pluginCommand(argv: string[]): Promise<number> {
  return subCommand(
    'taskyard plugin',
    USAGE,
    argv,
    async ({ job: action, options, fields }) => {
      const one = (what: string): string => {
        if (fields.length !== 1 || fields[0]!.startsWith('-')) throw new UsageError(`give exactly one ${what}`);
        return fields[0]!;
      };
      let response: JobResponse;
      if (action === 'install') response = await install(one('package tarball or directory'), options);
      else if (action === 'uninstall') response = await callJob(await resolveConnection(options), 'uninstall_plugin', { name: one('plugin name') });
      else if (action === 'list') {
        if (fields.length) throw new UsageError('list takes no arguments');
        response = await callJob(await resolveConnection(options), 'list_plugins', {});
      } else if (action === 'init') {
        const python = fields.includes('--python');
        if (python) fields.splice(fields.indexOf('--python'), 1);
        const name = one('plugin name');
        return python ? initPythonPlugin(name) : initPlugin(name);
      }
      else throw new UsageError(action === undefined ? 'name an action: install, uninstall, list or init' : `unknown action ${JSON.stringify(action)}`);
      printResponse(response, options.output);
      return response.success ? EXIT.success : EXIT.failure;
    },
    [BusinessError],
  );
}
