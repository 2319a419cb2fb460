// Generates the validators of schemas/precompiled.ts with ajv's standalone code and bundles them,
// ajv's runtime helpers and formats included, into one ES module at the place tsc compiled that
// module to (dist/schemas/precompiled.js). Runs after tsc (`npm run build`); built from the
// compiled schemas, so running it again is harmless, and a schema edited without running it is
// only compiled at first use again (validators are matched by their schema's JSON text).
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (path) => pathToFileURL(join(root, 'dist', path)).href;
const { ajvOptions } = await import(dist('schemas/validator.js'));

/** What nearly every service process compiles: [compiled module, export, filled with defaults]. */
const SCHEMAS = [
  ['schemas/config.js', 'ConfigFile', true],
  ['schemas/job-response.js', 'RequestEnvelope', true],
  ['schemas/tasks.js', 'TaskStatus', true],
];

const scratch = mkdtempSync(join(tmpdir(), 'taskyard-precompile-'));
try {
  const entries = [];
  for (const [i, [module, name, defaults]] of SCHEMAS.entries()) {
    const schema = (await import(dist(module)))[name];
    if (!schema) throw new Error(`precompile: ${module} exports no ${name}`);
    const ajv = new Ajv({ ...ajvOptions(defaults), code: { source: true, esm: true } });
    addFormats.default(ajv);
    writeFileSync(join(scratch, `v${i}.mjs`), standaloneCode(ajv, ajv.compile(schema)));
    entries.push(`{ schema: ${JSON.stringify(JSON.stringify(schema))}, defaults: ${defaults}, validate: v${i} }`);
  }
  const imports = SCHEMAS.map((_, i) => `import v${i} from './v${i}.mjs';`).join('\n');
  writeFileSync(join(scratch, 'entry.mjs'), `${imports}\nexport const PRECOMPILED = [\n${entries.join(',\n')}];\n`);
  await build({
    entryPoints: [join(scratch, 'entry.mjs')],
    outfile: join(root, 'dist', 'schemas', 'precompiled.js'),
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // The generated code `require`s ajv's runtime helpers; bundled, they need no real `require`.
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'warning',
  });
  // tsc's source map describes the empty list, not the generated code.
  rmSync(join(root, 'dist', 'schemas', 'precompiled.js.map'), { force: true });
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
