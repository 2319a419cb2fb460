/**
 * The layout rule the suite checks (test/suite/import-graph.test.ts): no import cycle between
 * files, none between folders at any level, and no code file over 400 lines, across the whole
 * repository (product, bench, test and the console's sources).
 *
 * Imports are read with TypeScript's own pre-processor (`ts.preProcessFile`), so every relative
 * specifier counts: value and type-only imports, re-exports, and `import('…')` of a literal.
 * Folder cycles are found at the point where two paths diverge: an import from `a/b/x.ts` to
 * `a/c/d/y.ts` is an edge `b → c` among the sibling subtrees of `a/` (a folder's own files are the
 * node `.`), so `supervisor/tasks/runs → supervisor/tasks` and `bench → test` are both seen, each
 * at its own level. Any cycle between folders shows at the level where its folders part.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The most lines a code file may have. */
export const MAX_LINES = 400;
/** Files whose imports are read (TypeScript, and the few build scripts in JavaScript). */
const SOURCE = /\.(?:ts|mts|tsx|mjs|js)$/;
/** Code whose length counts; data (JSON, certificates, Markdown) does not. */
const CODE = /\.(?:ts|mts|tsx|mjs|js|c|css|sh|py|html)$/;
/** Never walked: dependencies, build output, and hidden folders (.git, .tap, .ci's state). */
const SKIPPED_DIRS = new Set(['node_modules', 'dist']);
/**
 * Files allowed over MAX_LINES, each with the reason. Only generated or vendored data belongs
 * here; code is split instead.
 */
const LONG_FILES_ALLOWED: Readonly<Record<string, string>> = {};

/** One import, by repository-relative paths with `/`. */
export interface Import {
  readonly from: string;
  readonly to: string;
}

/** A folder cycle: sibling subtrees of `parent` (`.` is the parent's own files) and the imports that make it. */
export interface FolderCycle {
  readonly parent: string;
  readonly members: readonly string[];
  readonly imports: readonly Import[];
}

export interface LayoutReport {
  /** Files read. */
  readonly files: number;
  /** Each strongly connected set of files, with the imports among them. */
  readonly fileCycles: ReadonlyArray<{ readonly files: readonly string[]; readonly imports: readonly Import[] }>;
  readonly folderCycles: readonly FolderCycle[];
  readonly longFiles: ReadonlyArray<{ readonly file: string; readonly lines: number }>;
}

function walk(root: string, dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) walk(root, full, out);
    } else if (entry.isFile() && CODE.test(entry.name)) {
      out.push(relative(root, full).split(sep).join('/'));
    }
  }
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the sources), or undefined when it is none of ours. */
function resolveImport(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const target = posix.normalize(posix.join(posix.dirname(from), specifier));
  const stem = target.slice(0, target.length - extname(target).length);
  const candidates = target.endsWith('.js') ? [`${stem}.ts`, `${stem}.tsx`, target] : target.endsWith('.mjs') ? [`${stem}.mts`, target] : [target, `${target}.ts`];
  return candidates.find((c) => files.has(c));
}

/** Tarjan's strongly connected components of more than one node, members sorted. */
function cycles(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      component.push(w);
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Where the folders of two files part: the common parent and the sibling subtree on each side (`.`: the parent's own files). */
function divergence(from: string, to: string): { parent: string; a: string; b: string } | undefined {
  const a = posix.dirname(from).split('/').filter((p) => p !== '.');
  const b = posix.dirname(to).split('/').filter((p) => p !== '.');
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  if (k === a.length && k === b.length) return undefined;
  return { parent: a.slice(0, k).join('/') || '.', a: a[k] ?? '.', b: b[k] ?? '.' };
}

function folderCycles(imports: readonly Import[]): FolderCycle[] {
  // parent → subtree → subtree it imports → the imports that make the edge
  const levels = new Map<string, Map<string, Map<string, Import[]>>>();
  for (const i of imports) {
    const d = divergence(i.from, i.to);
    if (!d) continue;
    const level = levels.get(d.parent) ?? new Map<string, Map<string, Import[]>>();
    levels.set(d.parent, level);
    const out = level.get(d.a) ?? new Map<string, Import[]>();
    level.set(d.a, out);
    out.set(d.b, [...(out.get(d.b) ?? []), i]);
  }
  const found: FolderCycle[] = [];
  for (const [parent, level] of [...levels].sort(([a], [b]) => a.localeCompare(b))) {
    for (const members of cycles(level.keys(), (v) => level.get(v)?.keys() ?? [])) {
      const inside = new Set(members);
      const edges = members.flatMap((m) => [...(level.get(m) ?? [])].filter(([to]) => inside.has(to)).flatMap(([, list]) => list));
      found.push({ parent, members, imports: edges });
    }
  }
  return found;
}

/** Reads the tree under `root` and reports every cycle and long file. */
export function checkLayout(root: string): LayoutReport {
  const all: string[] = [];
  walk(root, root, all);
  all.sort();
  const files = new Set(all.filter((f) => SOURCE.test(f)));
  const imports: Import[] = [];
  const longFiles: Array<{ file: string; lines: number }> = [];
  for (const file of all) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_LINES && !(file in LONG_FILES_ALLOWED)) longFiles.push({ file, lines });
    if (!files.has(file)) continue;
    const targets = new Set<string>();
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      const to = resolveImport(file, fileName, files);
      if (to !== undefined && to !== file) targets.add(to);
    }
    for (const to of targets) imports.push({ from: file, to });
  }
  const byFile = new Map<string, string[]>();
  for (const i of imports) byFile.set(i.from, [...(byFile.get(i.from) ?? []), i.to]);
  const fileCycles = cycles(files, (f) => byFile.get(f) ?? []).map((members) => {
    const inside = new Set(members);
    return { files: members, imports: imports.filter((i) => inside.has(i.from) && inside.has(i.to)) };
  });
  return { files: files.size, fileCycles, folderCycles: folderCycles(imports), longFiles };
}

/** The report as text a person can act on: each cycle with the imports that close it. */
export function describeLayout(report: LayoutReport): string {
  const lines: string[] = [];
  const arrow = (i: Import) => `      ${i.from} → ${i.to}`;
  for (const c of report.fileCycles) lines.push(`file cycle: ${c.files.join(', ')}`, ...c.imports.map(arrow));
  for (const c of report.folderCycles) {
    const where = c.parent === '.' ? 'the top level' : `${c.parent}/`;
    lines.push(`folder cycle in ${where}: ${c.members.join(' ↔ ')}`, ...c.imports.map(arrow));
  }
  for (const f of report.longFiles) lines.push(`over ${MAX_LINES} lines: ${f.file} (${f.lines})`);
  return lines.join('\n');
}

/** `node dist/test/suite/import-graph.js [root]` prints the report; exits 1 when it found anything. */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = checkLayout(process.argv[2] ?? fileURLToPath(new URL('../../../', import.meta.url)));
  const text = describeLayout(report);
  console.log(text || `${report.files} files: no import cycle, no file over ${MAX_LINES} lines`);
  process.exit(text ? 1 : 0);
}
