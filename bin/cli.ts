/**
 * `taskyard serve ...` starts the service, `taskyard plugin install ...` and `taskyard sync push ...`
 * move plugins and Task results to a service, `taskyard download` fetches files; any other first word is a Job name. Each path loads
 * only its own modules, so a Job call does not pay for importing the whole service.
 */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'serve') return (await import('./serve-command.js')).serveCommand(rest);
  if (command === 'plugin') return (await import('./plugin-command.js')).pluginCommand(rest);
  if (command === 'sync') return (await import('./sync-command.js')).syncCommand(rest);
  if (command === 'download') return (await import('./download-command.js')).downloadCommand(rest);
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
