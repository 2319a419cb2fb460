import { serveCommand } from './serve-command.js';
import { jobCommand } from './job-command.js';

/** `taskyard serve ...` starts the service; any other first word is a Job name. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'serve') return serveCommand(rest);
  return jobCommand(argv);
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
