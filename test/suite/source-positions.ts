/**
 * Test processes run without `--enable-source-maps` (test/suite/run-file.ts): with it, Node reads
 * and parses the source map of every module it loads (tap's ~200 and the service's ~200), ~0.15 s
 * of CPU per test process whether anything fails or not. The positions a failure reports (stack
 * lines, tap's `at:` block) then name compiled files; the suite runner maps them back to the
 * TypeScript here, only for the output of a file that failed.
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `…dist/x.js:12:5` in a stack line, as a path relative to the working directory or a file URL. */
const STACK_POSITION = /((?:file:\/\/)?[^\s()'"]*?dist\/[^\s()'"]+?\.js):(\d+):(\d+)/g;
/** tap's `at:` block: `fileName: dist/x.js`, then `lineNumber: 12` and `columnNumber: 5`, each on its own line. */
const AT_BLOCK = /fileName: (\S*dist\/\S+\.js)\n(\s+)lineNumber: (\d+)\n(\s+)columnNumber: (\d+)/g;

interface Position {
  file: string;
  line: number;
  column: number;
}

/** Maps compiled positions to source positions, reading each source map once. */
class SourceMaps {
  readonly #maps = new Map<string, SourceMap | null>();

  #map(path: string): SourceMap | null {
    let map = this.#maps.get(path);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
      } catch {
        map = null; // no map beside it (a dependency, a bundle): the position stays as it is
      }
      this.#maps.set(path, map);
    }
    return map;
  }

  /** The source position of a 1-based compiled position, or undefined when there is none. */
  original(file: string, line: number, column: number): Position | undefined {
    const path = resolve(file.startsWith('file://') ? fileURLToPath(file) : file);
    // A dependency's positions stay as they are: its sources are not what a failure is about.
    if (path.includes('/node_modules/')) return undefined;
    const entry = this.#map(path)?.findEntry(line - 1, column - 1);
    if (!entry || !('originalSource' in entry)) return undefined;
    const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : resolve(dirname(path), entry.originalSource);
    return { file: relative(process.cwd(), source), line: entry.originalLine + 1, column: entry.originalColumn + 1 };
  }
}

/** `text` with every compiled position it names replaced by its TypeScript position. */
export function sourcePositions(text: string): string {
  const maps = new SourceMaps();
  return text
    .replace(AT_BLOCK, (whole, file: string, lineIndent: string, line: string, columnIndent: string, column: string) => {
      const at = maps.original(file, Number(line), Number(column));
      return at ? `fileName: ${at.file}\n${lineIndent}lineNumber: ${at.line}\n${columnIndent}columnNumber: ${at.column}` : whole;
    })
    .replace(STACK_POSITION, (whole, file: string, line: string, column: string) => {
      const at = maps.original(file, Number(line), Number(column));
      return at ? `${at.file}:${at.line}:${at.column}` : whole;
    });
}
