/**
 * The CLI's commands. `serve` starts the service; `plugin`, `sync`, `logs`, `task`, `run`, `download`, `upload` and `chat`
 * are human commands; any other first word is a Job name. Each command loads only its own modules, so a
 * Job call does not pay for importing the whole service. A new command is one line here.
 */
type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  serve: async () => (await import('./serve-command.js')).serveCommand,
  plugin: async () => (await import('./plugin-command.js')).pluginCommand,
  sync: async () => (await import('./sync-command.js')).syncCommand,
  logs: async () => (await import('./logs-command.js')).logsCommand,
  task: async () => (await import('./task-run-command.js')).taskRunCommand,
  run: async () => (await import('./run-command.js')).runCommandTask,
  download: async () => (await import('./download-command.js')).downloadCommand,
  upload: async () => (await import('./upload-command.js')).uploadCommand,
  chat: async () => (await import('./chat-command.js')).chatCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const load = command !== undefined && Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load) return (await load())(rest);
  return (await import('./job-command.js')).jobCommand(argv);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`taskyard: ${(err as Error).message ?? String(err)}`);
    process.exitCode = 1;
  },
);
