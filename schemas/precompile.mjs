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

/** What nearly every service process compiles: [compiled module, export], filled with defaults. */
const EXPORTED = [
  ['schemas/config.js', 'ConfigFile'],
  ['schemas/job-response.js', 'RequestEnvelope'],
  ['schemas/tasks.js', 'TaskStatus'],
];
/** The Jobs most calls go to (their input schemas are written inline, so they are read from a built app). */
const JOBS = ['version', 'submit', 'status', 'wait_task', 'cancel', 'list_task_statuses', 'read_task_log', 'shell', 'preview_file', 'list_entries'];
/** The built-in Tasks whose inputs a submit checks. */
const TASKS = ['demo', 'sleep'];

/** The schemas to generate, each once: the exported ones, then those of a service built in this process. */
async function schemasToGenerate() {
  const schemas = [];
  for (const [module, name] of EXPORTED) {
    const schema = (await import(dist(module)))[name];
    if (!schema) throw new Error(`precompile: ${module} exports no ${name}`);
    schemas.push(schema);
  }
  const { validateConfig } = await import(dist('supervisor/common/config.js'));
  const { createApp } = await import(dist('app/create-app.js'));
  const workspace = mkdtempSync(join(tmpdir(), 'taskyard-precompile-workspace-'));
  const config = validateConfig({ service: { workspace, runner_pool_size: 0, gpus: 0 }, machine: { history: { enabled: false } } }, 'precompile');
  const token = 'precompile-token-0123456789';
  const app = await createApp({ config, token });
  try {
    for (const name of JOBS) {
      const entry = app.registry.get(name);
      if (!entry) throw new Error(`precompile: no Job ${name}`);
      schemas.push(entry.job.input);
    }
    for (const task of TASKS) {
      const res = await app.request({ method: 'POST', path: '/jobs/get_task_definition', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ arguments: { task } }) });
      const reply = JSON.parse(res.text());
      if (!reply.success) throw new Error(`precompile: get_task_definition ${task}: ${JSON.stringify(reply.answer)}`);
      schemas.push(reply.answer.input_schema);
    }
  } finally {
    await app.close();
    rmSync(workspace, { recursive: true, force: true });
  }
  const seen = new Set();
  return schemas.filter((s) => !seen.has(JSON.stringify(s)) && seen.add(JSON.stringify(s)));
}

const SCHEMAS = (await schemasToGenerate()).map((schema) => [schema, true]);
const scratch = mkdtempSync(join(tmpdir(), 'taskyard-precompile-'));
try {
  const entries = [];
  for (const [i, [schema, defaults]] of SCHEMAS.entries()) {
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
