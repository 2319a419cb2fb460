import { UsageError } from './cli-errors.js';

/** Options of every Job command, recognised anywhere on the line. */
export interface GlobalOptions {
  url?: string;
  token?: string;
  workspace?: string;
  target?: string;
  json?: string;
  /** `json` (the default, for scripts) or `text` (short summaries for people). */
  output?: string;
  stream: boolean;
  /** `submit --follow`, `logs --follow`: keep printing until the Task ends. */
  follow: boolean;
  help: boolean;
}

/** The command line split into the Job name, global options and the Job's own `--field` tokens. */
export interface SplitArgs {
  job: string | undefined;
  options: GlobalOptions;
  /** Tokens left for the Job's parameters, in order (interpreted later with the Job's schema). */
  fields: string[];
}

type ValuedOption = 'url' | 'token' | 'workspace' | 'target' | 'json' | 'output';
const VALUED = new Set<string>(['url', 'token', 'workspace', 'target', 'json', 'output']);
const FLAGS = new Set<string>(['stream', 'follow', 'help']);

/**
 * Splits argv. The first word that is not an option is the Job name; options that take a value
 * accept `--opt value` and `--opt=value`. Anything else is kept for the Job's schema to interpret,
 * because only the schema knows whether `--x` takes a value.
 */
export function splitArgs(argv: readonly string[]): SplitArgs {
  const options: GlobalOptions = { stream: false, follow: false, help: false };
  const fields: string[] = [];
  let job: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === '-h') {
      options.help = true;
      continue;
    }
    const match = /^--([^=]+)(?:=(.*))?$/s.exec(token);
    const name = match?.[1];
    if (name !== undefined && VALUED.has(name)) {
      const value = match?.[2] ?? argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      options[name as ValuedOption] = value;
    } else if (name !== undefined && FLAGS.has(name) && match?.[2] === undefined) {
      options[name as 'stream' | 'follow' | 'help'] = true;
    } else if (job === undefined) {
      if (token.startsWith('-')) throw new UsageError(`put the Job name before its parameters (got ${token} first)`);
      job = token;
    } else {
      fields.push(token);
    }
  }
  if (options.output !== undefined && options.output !== 'json' && options.output !== 'text') throw new UsageError(`--output is json or text, got ${JSON.stringify(options.output)}`);
  if (options.url !== undefined && options.target !== undefined) throw new UsageError('--url and --target exclude each other: --target connects directly to that address');
  return { job, options, fields };
}
