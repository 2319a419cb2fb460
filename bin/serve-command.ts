import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type ConfigOverrides } from '../supervisor/common/config.js';
import { startService } from '../app/service.js';
import { loadOrCreateToken } from '../supervisor/common/token-store.js';
import { WorkspaceInUseError } from '../supervisor/common/workspace-lock.js';
import { hideTokenFromProc } from './hide-token.js';
import { OPEN_SERVICE_NOTE } from '../core/errors.js';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { DEFAULT_WORKSPACE, resolveWorkspace } from '../schemas/workspace-path.js';

const USAGE = `usage: taskyard serve [--config FILE] [--host H] [--port P] [--workspace DIR] [--token T | --no-token]

Starts the service. Without a token in the config, --token or TASKYARD_TOKEN, a token is generated
on first start and kept in <workspace>/.taskyard/token (mode 0600). --no-token runs an open service
where only Jobs with requires_auth=false are public.`;

/** The package's bin/ directory, where the `taskyard` launcher is. */
const BIN_DIR = join(PACKAGE_ROOT, 'bin');

/**
 * How to call this service from another shell (what \`npm start\` leaves a newcomer asking): the
 * CLI on PATH or through npx, with --workspace when the workspace is not the default one (the
 * CLI finds the service's address and token through it), and the token when it is not in the
 * workspace's token file.
 */
function cliHint(workspace: string, tokenOutsideFile: boolean): string {
  const flags = workspace === resolveWorkspace(DEFAULT_WORKSPACE) ? '' : ` --workspace ${JSON.stringify(workspace)}`;
  const token = !tokenOutsideFile ? '' : '\n  (this service\'s token is not in its token file: set TASKYARD_TOKEN to it in that shell)';
  return [
    'call it from another shell with the taskyard CLI, e.g.:',
    `  export PATH="${BIN_DIR}:$PATH"; taskyard version${flags}`,
    `  or, in ${PACKAGE_ROOT.replace(/\/+$/, '')}: npx taskyard version${flags}`,
    `  (taskyard --help lists the commands and Jobs; the CLI finds this service through its workspace)${token}`,
  ].join('\n');
}

/** `taskyard serve`: returns the process exit code once the service has stopped. */
export async function serveCommand(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parse>['values'];
  function parse(args: string[]) {
    return parseArgs({
      args,
      options: {
        config: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        workspace: { type: 'string' },
        token: { type: 'string' },
        'no-token': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  }
  try {
    values = parse(argv).values;
  } catch (err) {
    console.error(`taskyard serve: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.token !== undefined && values['no-token']) {
    console.error(`taskyard serve: --token and --no-token exclude each other\n\n${USAGE}`);
    return 2;
  }
  const overrides: ConfigOverrides = {};
  if (values.host !== undefined) overrides.host = values.host;
  if (values.workspace !== undefined) overrides.workspace = values.workspace;
  if (values.port !== undefined) {
    if (!/^\d+$/.test(values.port) || Number(values.port) > 65535) {
      console.error(`taskyard serve: --port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
      return 2;
    }
    overrides.port = Number(values.port);
  }
  const envToken = process.env['TASKYARD_TOKEN'];
  if (values.token !== undefined) overrides.token = values.token;
  else if (envToken) overrides.token = envToken;
  // Read once; from here on no child process (shell, npm, probes, Task runners) inherits it, and
  // /proc/<pid>/cmdline and environ (readable by the same user, `ps`) show stars in its place.
  delete process.env['TASKYARD_TOKEN'];
  if (typeof overrides.token === 'string' && !hideTokenFromProc(overrides.token)) {
    console.error('taskyard serve: warning: the token could not be hidden from /proc/<pid>/cmdline and environ on this system; prefer the token file (see "What the service trusts")');
  }

  // A safety net, not the fix: every known failure is handled where it happens. Should a promise
  // still be left without a handler, one request or one Task must not end the service.
  process.on('unhandledRejection', (reason) => console.error('taskyard: an unexpected rejection was not handled (please report it); the service keeps running:', reason));
  try {
    const config = loadConfig(values.config, overrides);
    const token = values['no-token'] ? null : (config.service.token ?? (await loadOrCreateToken(config.service.workspace)));
    const service = await startService({ config, token });
    const consoleUrl = token ? `${service.url}/#token=${encodeURIComponent(token)}` : `${service.url}/`;
    console.log(`taskyard listening on ${service.url} (${service.adapter} front end)`);
    console.log(`workspace: ${service.workspace}`);
    console.log(token ? `console: ${consoleUrl}` : `console: ${consoleUrl} (no token: only requires_auth=false Jobs are public)`);
    if (!token && service.registry.hidesTokenJobs) {
      const { total } = service.registry.catalog;
      console.log(`note: ${total === 0 ? 'the catalog is empty' : `only ${total} Job${total === 1 ? ' is' : 's are'} public`}: ${OPEN_SERVICE_NOTE}`);
    }
    console.log(cliHint(service.workspace, token !== null && config.service.token !== null));
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await service.close();
    return 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof WorkspaceInUseError) {
      console.error(`taskyard serve: ${err.message}`);
      return 2;
    }
    console.error(`taskyard serve: ${(err as Error).message}`);
    return 1;
  }
}
