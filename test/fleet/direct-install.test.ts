import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { create as createTar } from 'tar';
import { installDirectly, uninstallDirectly } from '../../supervisor/plugins/direct-install.js';
import { runNpm } from '../../supervisor/plugins/run-npm.js';
import { craftTarGz } from './craft-tar.js';

/*
 * install_plugin and uninstall_plugin do npm's work in process for a package npm would only
 * unpack (supervisor/plugins/direct-install.ts). Here the same changes are made by real npm in one
 * prefix and directly in another: the two trees must be the same, byte for byte and mode for mode,
 * and npm must find the direct one valid. Anything npm does more than unpack is left to npm.
 */
const root = await mkdtemp(join(tmpdir(), 'taskyard-direct-install-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const never = new AbortController().signal;

/** A package tarball as npm pack lays it out, with an executable script and a .gitignore (npm pack renames it). */
async function pack(name: string, version: string, extra: Record<string, unknown> = {}): Promise<string> {
  const src = await mkdtemp(join(root, 'src-'));
  const dir = join(src, 'package');
  await mkdir(join(dir, 'bin-less'), { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version, type: 'module', license: 'MIT', taskyard: { tasks: './tasks.js' }, ...extra }, null, 2));
  await writeFile(join(dir, 'tasks.js'), 'export default [];\n');
  await writeFile(join(dir, 'bin-less', 'run.sh'), '#!/bin/sh\necho hi\n');
  await chmod(join(dir, 'bin-less', 'run.sh'), 0o755);
  await writeFile(join(dir, '.gitignore'), 'build/\n');
  const file = join(src, 'package.tgz');
  await createTar({ gzip: true, cwd: src, file }, ['package']);
  return file;
}

/** A fresh prefix, as the installer makes one (plugin-prefix.ts copyPrefix). */
async function prefix(label: string): Promise<string> {
  const dir = join(await mkdtemp(join(root, `${label}-`)), 'plugins');
  await mkdir(join(dir, 'tarballs'), { recursive: true });
  await writeFile(join(dir, 'package.json'), `${JSON.stringify({ private: true, description: 'taskyard plugins', dependencies: {} }, null, 2)}\n`);
  return dir;
}

/** Every path under `dir` with its mode and content (a directory: its mode only). */
async function tree(dir: string, under = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(join(dir, under))).sort()) {
    const path = join(under, name);
    const stat = await lstat(join(dir, path));
    const mode = (stat.mode & 0o7777).toString(8);
    if (stat.isDirectory()) Object.assign(out, { [`${path}/`]: mode }, await tree(dir, path));
    else out[path] = `${mode} ${(await readFile(join(dir, path))).toString('base64')}`;
  }
  return out;
}

/** Puts the same tarball into both prefixes; answers its path relative to them. */
async function stage(file: string, prefixes: string[], label: string): Promise<string> {
  const rel = `tarballs/${label}.tgz`;
  for (const p of prefixes) await copyFile(file, join(p, rel));
  return rel;
}

t.test('a package without dependencies: the same tree npm makes, at every step', async (t) => {
  const byNpm = await prefix('npm');
  const direct = await prefix('direct');
  const steps: Array<[string, () => Promise<[void, boolean]>]> = [
    ['install', async () => {
      const rel = await stage(await pack('zeta', '1.0.0'), [byNpm, direct], 'zeta-1');
      return Promise.all([runNpm(['install', `./${rel}`], byNpm, never), installDirectly(direct, rel)]);
    }],
    ['install a scoped package beside it', async () => {
      const rel = await stage(await pack('@scope/alpha', '2.0.0-beta.1'), [byNpm, direct], 'alpha');
      return Promise.all([runNpm(['install', `./${rel}`], byNpm, never), installDirectly(direct, rel)]);
    }],
    ['upgrade', async () => {
      const rel = await stage(await pack('zeta', '1.1.0', { description: 'The next one.' }), [byNpm, direct], 'zeta-2');
      return Promise.all([runNpm(['install', `./${rel}`], byNpm, never), installDirectly(direct, rel)]);
    }],
    ['uninstall', () => Promise.all([runNpm(['uninstall', '@scope/alpha'], byNpm, never), uninstallDirectly(direct, '@scope/alpha')])],
  ];
  for (const [what, step] of steps) {
    const [, done] = await step();
    t.equal(done, true, `${what}: done without npm`);
    t.same(await tree(direct), await tree(byNpm), `${what}: the same files, contents and modes as npm's`);
  }
  t.match((await readFile(join(direct, 'node_modules', 'zeta', 'bin-less', 'run.sh'))).toString(), 'echo hi', 'the package is there');
});

t.test('what npm does more than unpack is left to npm, with nothing changed', async (t) => {
  const cases: Array<[string, () => Promise<string>]> = [
    ['dependencies', () => pack('p-deps', '1.0.0', { dependencies: { left: '^1.0.0' } })],
    ['peer dependencies', () => pack('p-peer', '1.0.0', { peerDependencies: { left: '^1.0.0' } })],
    ['bundled dependencies', () => pack('p-bundled', '1.0.0', { bundleDependencies: ['left'] })],
    ['a bin to link', () => pack('p-bin', '1.0.0', { bin: { hi: './bin-less/run.sh' } })],
    ['a bin directory', () => pack('p-bindir', '1.0.0', { directories: { bin: './bin-less' } })],
    ['a platform constraint', () => pack('p-os', '1.0.0', { os: ['darwin'] })],
    ['a name npm refuses', () => pack('Not-Lower', '1.0.0')],
    ['a name npm reserves', () => pack('node_modules', '1.0.0')],
    ['a version npm refuses', () => pack('p-version', 'one')],
    ['not a tarball', async () => {
      const file = join(root, 'junk.tgz');
      await writeFile(file, 'this is not a gzip file');
      return file;
    }],
    ['a tarball without package/', async () => {
      const src = await mkdtemp(join(root, 'src-'));
      await mkdir(join(src, 'other'));
      await writeFile(join(src, 'other', 'package.json'), JSON.stringify({ name: 'p-other', version: '1.0.0' }));
      await createTar({ gzip: true, cwd: src, file: join(src, 'x.tgz') }, ['other']);
      return join(src, 'x.tgz');
    }],
  ];
  for (const [what, make] of cases) {
    const p = await prefix('left');
    const rel = await stage(await make(), [p], 'x');
    const before = await tree(p);
    t.equal(await installDirectly(p, rel), false, what);
    t.same(await tree(p), before, `${what}: nothing changed`);
  }
});

/** A prefix whose lockfile has a nested package (a plugin's own dependency). */
async function nestedPrefix(): Promise<string> {
  const p = await prefix('nested');
  const lock = { name: 'plugins', lockfileVersion: 3, requires: true, packages: { '': { dependencies: { a: 'file:tarballs/a.tgz' } }, 'node_modules/a': { version: '1.0.0', dependencies: { b: '^1.0.0' } }, 'node_modules/b': { version: '1.0.0' } } };
  await writeFile(join(p, 'package.json'), JSON.stringify({ private: true, dependencies: { a: 'file:tarballs/a.tgz' } }));
  await writeFile(join(p, 'package-lock.json'), JSON.stringify(lock));
  return p;
}

t.test('a prefix whose tree is not flat, or has no lockfile for its plugins, is left to npm', async (t) => {
  const nested = await nestedPrefix();
  const rel = await stage(await pack('p-fine', '1.0.0'), [nested], 'fine');
  const before = await tree(nested);
  t.equal(await installDirectly(nested, rel), false, 'install into a tree with nested dependencies');
  t.equal(await uninstallDirectly(nested, 'a'), false, 'uninstall from it');
  t.same(await tree(nested), before, 'nothing changed');

  const unlocked = await prefix('unlocked');
  await writeFile(join(unlocked, 'package.json'), JSON.stringify({ private: true, dependencies: { placed: '1.0.0' } }));
  const rel2 = await stage(await pack('p-fine', '1.0.0'), [unlocked], 'fine');
  t.equal(await installDirectly(unlocked, rel2), false, 'install beside plugins no lockfile describes');
  t.equal(await uninstallDirectly(unlocked, 'placed'), false, 'uninstall of one');
});

t.test('a crafted tarball unpacks its files only, and nothing outside the package folder', async (t) => {
  const p = await prefix('crafted');
  const manifest = JSON.stringify({ name: 'p-crafted', version: '1.0.0', taskyard: { tasks: './tasks.js' } });
  await writeFile(join(p, 'tarballs', 'x.tgz'), craftTarGz([
    { path: 'package/package.json', body: manifest },
    { path: 'package/tasks.js', body: 'export default [];\n' },
    { path: 'package/../../escaped.txt', body: 'out' },
    { path: '/tmp/absolute-escape.txt', body: 'out' },
    { path: 'package/link', type: 'SymbolicLink', linkpath: '/etc/passwd' },
    { path: 'package/hard', type: 'Link', linkpath: 'package/tasks.js' },
    { path: 'package/fifo', type: 'FIFO' },
  ]));
  t.equal(await installDirectly(p, 'tarballs/x.tgz'), false, 'a member outside package/ leaves it to npm');

  await writeFile(join(p, 'tarballs', 'y.tgz'), craftTarGz([
    { path: 'package/package.json', body: manifest },
    { path: 'package/tasks.js', body: 'export default [];\n' },
    { path: 'package/../../escaped.txt', body: 'out' },
    { path: 'package/link', type: 'SymbolicLink', linkpath: '/etc/passwd' },
    { path: 'package/hard', type: 'Link', linkpath: 'package/tasks.js' },
    { path: 'package/fifo', type: 'FIFO' },
  ]));
  t.equal(await installDirectly(p, 'tarballs/y.tgz'), true);
  t.same((await readdir(join(p, 'node_modules', 'p-crafted'))).sort(), ['package.json', 'tasks.js'], 'links, FIFOs and .. names are not unpacked');
  t.same((await readdir(join(p, 'node_modules'))).sort(), ['.package-lock.json', 'p-crafted']);
  t.same((await readdir(p)).sort(), ['node_modules', 'package-lock.json', 'package.json', 'tarballs'], 'nothing beside the prefix files');
  t.same((await readdir(join(p, '..'))).sort(), ['plugins'], 'nor above them');
});
