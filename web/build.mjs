// Bundles the web console offline with esbuild into dist/web: one hashed script, one hashed
// stylesheet, and index.html pointing at them. Type checking is `tsc -p web` (esbuild only strips).
import { build } from 'esbuild';
import { mkdir, readFile, rm, writeFile, copyFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = dirname(fileURLToPath(import.meta.url));
const outDir = join(webDir, '..', 'dist', 'web');

await rm(outDir, { recursive: true, force: true });
await mkdir(join(outDir, 'assets'), { recursive: true });

const result = await build({
  entryPoints: { app: join(webDir, 'src', 'main.ts') },
  bundle: true,
  format: 'esm',
  // Current Chromium and Firefox; no transpiling of modern syntax is needed.
  target: ['chrome120', 'firefox120'],
  minify: true,
  sourcemap: 'external', // kept on disk for developers; the service does not serve maps
  outdir: join(outDir, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  // Served beside the bundle by the service, not bundled.
  external: ['/favicon.svg'],
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((p) => relative(outDir, p).split('\\').join('/'));
const script = outputs.find((p) => p.endsWith('.js'));
const style = outputs.find((p) => p.endsWith('.css'));
if (!script || !style) throw new Error(`esbuild produced no script or stylesheet: ${outputs.join(', ')}`);

const template = await readFile(join(webDir, 'index.html'), 'utf8');
await writeFile(join(outDir, 'index.html'), template.replace('%SCRIPT%', `/${script}`).replace('%STYLE%', `/${style}`));
await copyFile(join(webDir, 'favicon.svg'), join(outDir, 'favicon.svg'));
console.log(`web console: ${basename(script)}, ${basename(style)} -> ${relative(process.cwd(), outDir) || '.'}`);
