import { parseArgs } from 'node:util';
import { splitArgs, type GlobalOptions } from './cli-args.js';
import { CallError, EXIT, runCommand, UsageError } from './cli-errors.js';
import { resolveConnection, type Connection } from './connection.js';
import { callJob, request } from './job-client.js';
import { followTaskToEnd, type FollowEnd } from './task-follow.js';
import type { TaskHandle } from '../schemas/tasks.js';

const USAGE = `usage: taskyard run [--task-name NAME] [--source-tasks IDS] [--gpus N] [--cwd DIR] [--env NAME=VALUE ...]
                    [--url URL | --target ADDRESS] [--token TOKEN] -- PROGRAM [ARG ...]

Runs PROGRAM with its arguments as a tracked Task of the service (the built-in \`command\` Task),
without a shell; everything after -- is passed as it is. Prints the Task ID on stderr first, then
follows the Task: the command's output (stdout and stderr, as task.log keeps them) on stdout, the
steps and progress it reports (Python: \`import taskyard_task\`) and the final status on stderr.

  --task-name NAME    the Task's name (1-32 letters, digits, hyphens; default a generated one)
  --source-tasks IDS  Task IDs it derives from, for lineage (commas, or the flag repeated)
  --gpus N            GPUs this run holds (the service leases them and names them in
                      CUDA_VISIBLE_DEVICES; on Slurm they become the job's GPU request)
  --cwd DIR           working directory, relative to the service's workspace (default the Task's)
  --env NAME=VALUE    a variable for the command (repeat the flag for more)

Ctrl-C cancels the Task (the service ends the command's whole process tree), waits until it is
recorded cancelled and exits 130; a second Ctrl-C exits at once.

The service offers the command Task only when it has a token (it runs any program, as shell
does), and only to a caller whose token may call shell.

Exit code: the command's (0 when the Task succeeded; the recorded exit_code when it failed, 1 for
an uncaught Python exception), 130 when cancelled, 1 when the service refused the run or could
not be reached, 2 on a usage error.`;

/** What a usage error shows: the synopsis, not the whole help. */
const SYNOPSIS = `${USAGE.split('\n\n')[0]}\n(taskyard run --help explains each option)`;

/** The most GPUs a Task may hold (TaskResources.gpus). */
const MAX_GPUS = 64;

/** The exit code of an interrupted (cancelled) run, as a shell gives for Ctrl-C. */
const EXIT_CANCELLED = 130;

/** What the command line asks to run. */
interface RunRequest {
  readonly options: GlobalOptions;
  /** The `command` Task's inputs: argv, and cwd, env, resources, task_name, source_tasks when given. */
  readonly inputs: Record<string, unknown>;
}

/** `NAME=VALUE` pairs as the `env` input. */
function envOf(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--env takes NAME=VALUE, got ${JSON.stringify(pair)}`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/** This command's own options (before `--`); a mistake in them is a usage error. */
function optionValues(fields: string[]) {
  try {
    return parseArgs({
      args: fields,
      options: { 'task-name': { type: 'string' }, 'source-tasks': { type: 'string', multiple: true }, gpus: { type: 'string' }, cwd: { type: 'string' }, env: { type: 'string', multiple: true } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new UsageError(`${(err as Error).message.split('. ')[0]} (the command itself goes after --)`);
  }
}

/** Splits the line at `--`: this command's options before it, the command after it. */
function parseRun(argv: readonly string[]): RunRequest | 'help' {
  const at = argv.indexOf('--');
  // splitArgs reads the connection options; the first word it expects is a Job name, here `run` itself.
  const { options, fields } = splitArgs(['run', ...(at === -1 ? argv : argv.slice(0, at))]);
  if (options.help) return 'help';
  const command = at === -1 ? [] : argv.slice(at + 1);
  if (at === -1 || command.length === 0 || command[0] === '') throw new UsageError('put the command after --, e.g. taskyard run -- python train.py --lr 0.1');
  if (options.stream || options.json !== undefined || options.output !== undefined) throw new UsageError('--stream, --json and --output are not options of run: it always follows the Task and prints its log');
  const values = optionValues(fields);
  const gpus = values.gpus === undefined ? undefined : Number(values.gpus);
  if (gpus !== undefined && !(/^\d+$/.test(values.gpus!) && gpus <= MAX_GPUS)) throw new UsageError(`--gpus takes a number of GPUs (0-${MAX_GPUS}), got ${JSON.stringify(values.gpus)}`);
  const inputs: Record<string, unknown> = { argv: command };
  if (values.cwd !== undefined) inputs['cwd'] = values.cwd;
  if (values.env?.length) inputs['env'] = envOf(values.env);
  if (values['task-name'] !== undefined) inputs['task_name'] = values['task-name'];
  if (values['source-tasks']?.length) inputs['source_tasks'] = values['source-tasks'].join(',');
  if (gpus !== undefined) inputs['resources'] = { gpus };
  return { options, inputs };
}

/** Whether the service lets callers in without a token (it answers `GET /jobs` to a request without one). */
async function isOpen(conn: Connection): Promise<boolean> {
  try {
    const response = await request({ ...conn, token: undefined }, '/jobs', { headers: { accept: 'application/json' } });
    response.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** What to tell the user of an open service, which runs no command for anyone who reaches it. */
function openServiceText(conn: Connection): string {
  return (
    `${conn.url} runs without a token (taskyard serve --no-token), and an open service does not offer the command Task ` +
    '(nor submit): anyone who reaches it could run any program.\nStart it with a token (without --no-token, `taskyard serve` makes one and keeps it in ' +
    '<workspace>/.taskyard/token), then run again; for a loopback service the CLI reads that file, otherwise pass --token or TASKYARD_TOKEN.'
  );
}

/** Why submit refused the `command` Task, and what to do about it; other refusals as the service said them. */
async function refusal(conn: Connection, answer: string): Promise<string> {
  const offered = !answer.startsWith('HTTP 404') && !answer.startsWith('PermissionError') && !answer.includes('Unknown task "command"');
  if (offered) return answer;
  if (await isOpen(conn)) return openServiceText(conn);
  return `${answer}\nThe command Task runs any program, as shell does: use the service token, or a scoped token whose jobs include submit and shell (service.tokens in the service's config).`;
}

/** Submits the `command` Task; a refusal (a failure, or no `submit` for this caller: 404) is a CallError that says why. */
async function submit(conn: Connection, inputs: Record<string, unknown>): Promise<TaskHandle> {
  let answer: string;
  try {
    const response = await callJob(conn, 'submit', { task: 'command', ...inputs });
    if (response.success) return response.answer;
    answer = String(response.answer);
  } catch (err) {
    if (!(err instanceof CallError)) throw err;
    answer = err.message;
  }
  throw new CallError(await refusal(conn, answer));
}

/**
 * Ctrl-C while the command runs: the first cancels the Task (as soon as its ID is known, when the
 * submit is still on its way) and lets the follow see it end; a second exits at once.
 */
function cancelOnInterrupt(conn: Connection) {
  let taskId: string | undefined;
  let interrupts = 0;
  const cancel = (id: string) => {
    console.error(`taskyard run: cancelling ${id} (Ctrl-C again to stop waiting)`);
    const failed = (why: string) => console.error(`taskyard run: cancel failed: ${why}`);
    callJob(conn, 'cancel', { task_id: id }).then(
      (r) => {
        if (!r.success) failed(String(r.answer));
      },
      (err: Error) => failed(err.message),
    );
  };
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(EXIT_CANCELLED);
    if (taskId !== undefined) cancel(taskId);
  };
  process.on('SIGINT', onSigint);
  return {
    started(id: string): void {
      taskId = id;
      if (interrupts > 0) cancel(id);
    },
    interrupted: () => interrupts > 0,
    dispose: () => process.off('SIGINT', onSigint),
  };
}

/** The command's exit code from how its Task ended. */
function exitCodeOf(end: FollowEnd, interrupted: boolean): number {
  if (interrupted || end.status?.state === 'cancelled') return EXIT_CANCELLED;
  if (end.status?.state === 'succeeded') return EXIT.success;
  const code = end.status?.exit_code ?? EXIT.failure;
  return code >= 1 && code <= 255 ? code : EXIT.failure;
}

/** `taskyard run [options] -- PROGRAM [ARG ...]`: returns the exit code. */
export function runCommandTask(argv: string[]): Promise<number> {
  return runCommand('taskyard run', SYNOPSIS, async () => {
    const parsed = parseRun(argv);
    if (parsed === 'help') {
      console.log(USAGE);
      return EXIT.success;
    }
    const conn = await resolveConnection(parsed.options);
    const interrupts = cancelOnInterrupt(conn);
    try {
      const { task_id, run_id } = await submit(conn, parsed.inputs);
      console.error(`task ${task_id}  (run ${run_id})`);
      interrupts.started(task_id);
      return exitCodeOf(await followTaskToEnd(conn, task_id, { progress: true }), interrupts.interrupted());
    } finally {
      interrupts.dispose();
    }
  });
}
