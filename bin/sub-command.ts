import { splitArgs, type SplitArgs } from './cli-args.js';
import { EXIT, runCommand } from './cli-errors.js';

/**
 * A command with actions (`plugin install`, `sync push`, `logs`): its usage on `--help`, the CLI's
 * error convention otherwise. The first word after the command is `args.job` (the action).
 */
export function subCommand(prefix: string, usage: string, argv: readonly string[], body: (args: SplitArgs) => Promise<number>, failures: Parameters<typeof runCommand>[3] = []): Promise<number> {
  return runCommand(
    prefix,
    usage,
    async () => {
      const args = splitArgs(argv);
      if (args.options.help) {
        console.log(usage);
        return EXIT.success;
      }
      return body(args);
    },
    failures,
  );
}
