/**
 * `taskyard serve ...` starts the service; any other first word is a Job name. Each path loads
 * only its own modules, so a Job call does not pay for importing the whole service.
 */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'serve') return (await import('./serve-command.js')).serveCommand(rest);
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
