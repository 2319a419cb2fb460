/**
 * The task runner's entry file (`runner.cjs`, the file every runner process is started with): it
 * runs the bundled runner (`runner-main.cjs`, see bundle.mjs) from V8's code cache. A runner lives
 * for one short run, so V8 compiled most of its functions on their first call, in every process:
 * ~5 ms of CPU of a ~35 ms stepped demo here. The build runs one demo with `--write-code-cache`,
 * which saves the compiled code once the run is over (functions compiled lazily included); every
 * later runner starts from it. A cache V8 rejects (another Node version, other V8 flags, a rebuilt
 * bundle) only means compiling as before.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';

const bundle = join(dirname(process.argv[1]!), 'runner-main.cjs');
const cacheFile = `${bundle}.code-cache`;

function readCache(): Buffer | undefined {
  try {
    // V8 checks a cache against its source's length only: one older than the bundle is another
    // bundle's (a rebuild of the same length), whose compiled code must not run.
    if (statSync(cacheFile).mtimeMs < statSync(bundle).mtimeMs) return undefined;
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

/** Saves the code compiled by the end of this run (atomically: concurrent runners may read it). */
function writeCache(script: Script): void {
  const temp = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(temp, script.createCachedData());
  renameSync(temp, cacheFile);
}

const source = readFileSync(bundle, 'utf8');
const script = new Script(`(function (exports, require, module, __filename, __dirname, __taskyardImport) {${source}\n})`, {
  filename: bundle,
  cachedData: readCache(),
});
if (process.argv.includes('--write-code-cache')) process.once('exit', () => writeCache(script));
const module = { exports: {} };
/** import() from this file, which Node loaded itself: code compiled from the cache cannot (see import-module.ts). */
const importHere = (specifier: string): Promise<unknown> => import(specifier);
(script.runInThisContext() as (...args: unknown[]) => void)(module.exports, createRequire(bundle), module, bundle, dirname(bundle), importHere);
