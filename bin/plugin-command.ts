import { splitArgs } from './cli-args.js';
import { CallError, EXIT, UsageError } from './cli-errors.js';
import { resolveConnection } from './connection.js';
import { callJob } from './job-client.js';
import { uploadFile } from './upload-client.js';

const USAGE = `usage: taskyard plugin install <package.tgz> [--target ADDRESS | --url URL] [--token TOKEN]

Uploads a plugin tarball (made by npm pack) with POST /files, then calls install_plugin with the
staged path and its sha256. --target installs on that service directly, with --token or
TASKYARD_TARGET_TOKEN. Prints install_plugin's JobResponse; exit code 0 when it succeeded.`;

/** `taskyard plugin install <file>`: returns the exit code. */
export async function pluginCommand(argv: string[]): Promise<number> {
  try {
    const { job: action, options, fields } = splitArgs(argv);
    if (options.help) {
      console.log(USAGE);
      return EXIT.success;
    }
    if (action !== 'install') throw new UsageError(action === undefined ? 'name an action' : `unknown action ${JSON.stringify(action)}`);
    if (fields.length !== 1 || fields[0]!.startsWith('-')) throw new UsageError('give exactly one package tarball');
    const conn = await resolveConnection(options);
    const staged = await uploadFile(conn, fields[0]!);
    const response = await callJob(conn, 'install_plugin', { path: staged.path, sha256: staged.sha256 });
    console.log(JSON.stringify(response, null, 2));
    return response.success ? EXIT.success : EXIT.failure;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`taskyard plugin: ${err.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    if (err instanceof CallError) {
      console.error(`taskyard plugin: ${err.message}`);
      return EXIT.failure;
    }
    throw err;
  }
}
