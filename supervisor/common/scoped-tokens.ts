import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { ANONYMOUS_NAME, SERVICE_TOKEN_NAME } from '../../core/caller.js';
import { ConfigError } from '../../core/errors.js';
import type { ScopedTokenEntry } from '../../schemas/config.js';

/** A scoped token with its value at hand. */
export interface ResolvedToken {
  readonly name: string;
  readonly token: string;
  readonly jobs: readonly string[];
}

/**
 * Reads `service.tokens`: each entry's value inline or from its file (relative to `baseDir`, the
 * configuration file's directory), names unique and not the reserved ones. Errors name the field,
 * never a token's value.
 */
export function resolveScopedTokens(entries: readonly ScopedTokenEntry[], baseDir: string): ResolvedToken[] {
  const names = new Set<string>();
  return entries.map((entry, i) => {
    const field = `service.tokens[${i}]`;
    if (entry.name === SERVICE_TOKEN_NAME || entry.name === ANONYMOUS_NAME) throw new ConfigError(`${field}.name: "${entry.name}" is reserved (service.token is "${SERVICE_TOKEN_NAME}")`);
    if (names.has(entry.name)) throw new ConfigError(`${field}.name: "${entry.name}" is used by another token`);
    names.add(entry.name);
    if ((entry.token === undefined) === (entry.token_file === undefined)) throw new ConfigError(`${field}: give exactly one of token and token_file`);
    let token = entry.token;
    if (token === undefined) {
      const file = isAbsolute(entry.token_file!) ? entry.token_file! : resolve(baseDir, entry.token_file!);
      try {
        token = readFileSync(file, 'utf8').trim();
      } catch (err) {
        throw new ConfigError(`${field}.token_file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      if (token.length < 16) throw new ConfigError(`${field}.token_file: ${file} must hold a token of at least 16 characters`);
    }
    return { name: entry.name, token, jobs: entry.jobs };
  });
}
