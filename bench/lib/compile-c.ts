import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../../core/build-info.js';

const execFileAsync = promisify(execFile);

/**
 * Compiles one of the bench's C programs (`source`, relative to the package root) with the
 * system's C compiler into `dir`, at bench time: the sources ship, binaries do not. Resolves with
 * the binary's path, or with an Error saying why there is none (no compiler, or it failed), so a
 * bench can skip that row and print the reason.
 */
export async function compileC(source: string, dir: string): Promise<string | Error> {
  const out = join(dir, source.replace(/^.*\//, '').replace(/\.c$/, ''));
  try {
    await execFileAsync('cc', ['-O2', '-o', out, join(PACKAGE_ROOT, source)]);
    return out;
  } catch (err) {
    return new Error(`cannot compile ${source} with cc: ${(err as Error).message.split('\n')[0]}`);
  }
}
