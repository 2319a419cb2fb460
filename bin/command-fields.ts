import { UsageError } from './cli-errors.js';

/**
 * A command's own fields (the CLI's global options already taken out): the flags that take a
 * value (`--dir X`, `--dir=X`, `-o X`), by the name `valued` maps them to, and the other words
 * in order (`-` is a word: standard input or output). An unknown flag, or a flag without its
 * value, is a UsageError that names it.
 */
export function commandFields<K extends string>(fields: readonly string[], valued: Readonly<Record<string, K>>): { values: Partial<Record<K, string>>; words: string[] } {
  const values: Partial<Record<K, string>> = {};
  const words: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const token = fields[i]!;
    const [flag, inline] = token.startsWith('--') && token.includes('=') ? [token.slice(0, token.indexOf('=')), token.slice(token.indexOf('=') + 1)] : [token, undefined];
    const key = Object.hasOwn(valued, flag) ? valued[flag] : undefined;
    if (key !== undefined) {
      const value = inline ?? fields[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      values[key] = value;
    } else if (token.startsWith('-') && token !== '-') throw new UsageError(`unknown option ${token}`);
    else words.push(token);
  }
  return { values, words };
}
