import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// Every uWebSockets.js import lives in the uws-*.ts files. We load the native binary ourselves:
// the package's own entry silently falls back to a broken JavaScript implementation.
export type UwsModule = typeof import('@trufflesuite/uws-js-unofficial');

/** Loads the native uWS binary for this Node ABI, or returns the reason it cannot. */
export function loadNativeUws(): UwsModule | Error {
  try {
    const require = createRequire(import.meta.url);
    const pkgDir = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'));
    const file = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
    return require(file) as UwsModule;
  } catch (err) {
    return err as Error;
  }
}
