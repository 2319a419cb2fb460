import { mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { EXIT, UsageError } from './cli-errors.js';

/** npm's rule for package names (lower case, optional scope). */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

const TASKS_TS = (taskType: string) => `import { writeFile } from 'node:fs/promises';
import { defineTask } from 'taskyard/task';

/**
 * The plugin's Tasks. The service imports the compiled module (dist/tasks.js, named by
 * "taskyard.tasks" in package.json) in a child process and runs each Task in its own process.
 */
export default [
  defineTask({
    name: 'count-words',
    taskType: '${taskType}',
    description: 'Counts the words of a text and writes the most frequent ones to words.json (an artifact).',
    input: {
      type: 'object',
      properties: {
        text: { type: 'string', minLength: 1, description: 'The text to count' },
        top: { type: 'integer', minimum: 1, default: 3, description: 'How many frequent words to report' },
      },
      required: ['text'],
    },
    output: {
      type: 'object',
      properties: { words: { type: 'integer' }, top: { type: 'array', items: { type: 'string' } } },
      required: ['words', 'top'],
    },
    async run(input, ctx) {
      const words = await ctx.step('split', () => String(input.text).toLowerCase().match(/[\\p{L}\\p{N}']+/gu) ?? []);
      const counts = await ctx.step('count', () => {
        const seen = new Map<string, number>();
        words.forEach((word, i) => {
          seen.set(word, (seen.get(word) ?? 0) + 1);
          if (i % 1000 === 0) ctx.progress((100 * i) / words.length);
        });
        ctx.progress(100);
        return seen;
      });
      const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, Number(input.top)).map(([word]) => word);
      await ctx.step('write', async () => {
        // The working directory is the Task's own directory; artifacts are paths inside it.
        await writeFile('words.json', JSON.stringify(Object.fromEntries(counts), null, 2));
        await ctx.artifact('counts', 'words.json');
      });
      ctx.logger.info(\`\${words.length} words, most frequent: \${top.join(', ')}\`);
      return { words: words.length, top };
    },
  }),
];
`;

const TEST_TS = `import { execFile } from 'node:child_process';
import { strict as assert } from 'node:assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const taskyard = process.env.TASKYARD_BIN ?? ${JSON.stringify(join(PACKAGE_ROOT, 'bin', 'taskyard'))};
const tasks = fileURLToPath(new URL('../tasks.js', import.meta.url));

test('count-words counts, reports the top words and writes its artifact', async (t) => {
  // A workspace of the test's own, removed after it (without --workspace the record is kept in a new temporary directory).
  const workspace = await mkdtemp(join(tmpdir(), 'count-words-test-'));
  t.after(() => rm(workspace, { recursive: true, force: true }));
  const { stdout } = await run(process.execPath, [taskyard, 'task', 'run', tasks, '--task', 'count-words', '--text', 'a b a c a b', '--top', '2', '--workspace', workspace]);
  assert.match(stdout, /"words": 6/);
  assert.match(stdout, /"top": \\[\\s*"a",\\s*"b"\\s*\\]/);
  assert.match(stdout, /counts: .*words\\.json/);
  assert.match(stdout, /succeeded/);
});
`;

const TSCONFIG = {
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, outDir: 'dist', rootDir: 'src', skipLibCheck: true, types: ['node'] },
  include: ['src'],
};

/** The package.json: the SDK (types and runtime) comes from the installed service, linked by npm. */
function manifest(name: string): Record<string, unknown> {
  return {
    name,
    version: '0.1.0',
    description: 'A taskyard plugin',
    type: 'module',
    files: ['dist/tasks.js'],
    taskyard: { tasks: './dist/tasks.js' },
    // `tsc -b` skips a build whose outputs are up to date (its record: tsconfig.tsbuildinfo), so
    // `npm test` right after `npm run build` does not parse the SDK's types a second time.
    scripts: { build: 'tsc -b tsconfig.json', test: 'npm run build && node --test dist/test/' },
    devDependencies: { taskyard: `file:${PACKAGE_ROOT.replace(/\/$/, '')}`, typescript: '5.9.3', '@types/node': '20.19.43' },
  };
}

/**
 * The new plugin's directory (./<name>) and task type, after checking the name and that nothing is
 * there yet: what every scaffold starts from.
 */
export async function newPluginDir(name: string): Promise<{ dir: string; taskType: string }> {
  if (!PACKAGE_NAME.test(name)) throw new UsageError(`${JSON.stringify(name)} is not an npm package name (lower case letters, digits, . _ -, optionally @scope/)`);
  const dir = resolve(basename(name));
  if (await stat(dir).then(() => true, () => false)) throw new UsageError(`${dir} already exists: choose another name or remove it`);
  return { dir, taskType: basename(name).replace(/[^A-Za-z0-9_-]/g, '-') };
}

/** `taskyard plugin init NAME`: writes a buildable, testable, installable plugin into ./<name>. */
export async function initPlugin(name: string): Promise<number> {
  const { dir, taskType } = await newPluginDir(name);
  await mkdir(join(dir, 'src', 'test'), { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(manifest(name), null, 2)}\n`);
  await writeFile(join(dir, 'tsconfig.json'), `${JSON.stringify(TSCONFIG, null, 2)}\n`);
  await writeFile(join(dir, '.gitignore'), 'node_modules/\ndist/\n*.tgz\n*.tsbuildinfo\n');
  await writeFile(join(dir, 'src', 'tasks.ts'), TASKS_TS(taskType));
  await writeFile(join(dir, 'src', 'test', 'tasks.test.ts'), TEST_TS);
  // What `npm install` makes of the file: dependency, so the SDK resolves before the first install.
  await mkdir(join(dir, 'node_modules'));
  await symlink(PACKAGE_ROOT, join(dir, 'node_modules', 'taskyard'), 'dir');
  console.log(`created ${dir}

next:
  cd ${basename(name)}
  npm install                 # TypeScript and @types/node; links the Task SDK from this taskyard
  npm run build               # tsc: src/tasks.ts -> dist/tasks.js
  npm test                    # runs count-words with taskyard task run
  taskyard task run dist/tasks.js --task count-words --text 'to be or not to be'
  taskyard plugin install .   # packs it with npm pack and installs it into the running service`);
  return EXIT.success;
}
