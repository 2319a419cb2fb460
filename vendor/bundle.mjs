// Bundles each module of vendor/ (a re-export of a dependency the service loads at every start),
// the dependency included, into one ES module at the place tsc compiled it to (dist/vendor/):
// Node loads one file of a package far faster than its hundreds (~0.7 ms of CPU per file), and
// every service start, CLI command and test process pays that. Runs after tsc (`npm run build`);
// built from the TypeScript sources, so running it again is harmless. Edit the TypeScript, never
// the bundle.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sourceDir = dirname(fileURLToPath(import.meta.url));
const outDir = join(sourceDir, '..', 'dist', 'vendor');
// A CommonJS dependency's own `require` of Node's built-in modules needs a real `require`.
const banner = "import { createRequire as __vendorRequire } from 'node:module'; const require = __vendorRequire(import.meta.url);";
for (const file of readdirSync(sourceDir).filter((f) => f.endsWith('.ts'))) {
  const outfile = join(outDir, file.replace(/\.ts$/, '.js'));
  await build({ entryPoints: [join(sourceDir, file)], outfile, allowOverwrite: true, bundle: true, platform: 'node', format: 'esm', target: 'node20', banner: { js: banner }, logLevel: 'warning' });
  // tsc's source map describes the re-export, not the bundle.
  rmSync(`${outfile}.map`, { force: true });
}
