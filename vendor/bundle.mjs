// Bundles each compiled module of vendor/ (a re-export of a dependency the service loads at every
// start) in place into one ES module, the dependency included: Node loads one file of a package
// far faster than its hundreds (~0.7 ms of CPU per file), and every service start, CLI command and
// test process pays that. Runs after tsc (`npm run build`): edit the TypeScript, never the bundle.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const outDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'vendor');
// A CommonJS dependency's own `require` of Node's built-in modules needs a real `require`.
const banner = "import { createRequire as __vendorRequire } from 'node:module'; const require = __vendorRequire(import.meta.url);";
for (const file of readdirSync(outDir).filter((f) => f.endsWith('.js'))) {
  const path = join(outDir, file);
  await build({ entryPoints: [path], outfile: path, allowOverwrite: true, bundle: true, platform: 'node', format: 'esm', target: 'node20', banner: { js: banner }, logLevel: 'warning' });
  // tsc's source map describes the re-export, not the bundle.
  rmSync(`${path}.map`, { force: true });
}
