import { readFileSync } from 'node:fs';
import t from 'tap';
import { parseSse } from '../helpers/service.js';
import { sourcePositions } from './source-positions.js';

/** The 1-based line of the TypeScript file that holds `text`. */
function lineOf(file: string, text: string): number {
  return readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;
}

/** The stack of an error thrown by a compiled module of this package (test/helpers/service.ts). */
function compiledStack(): string {
  try {
    parseSse('event: x\n\n');
  } catch (err) {
    return (err as Error).stack ?? '';
  }
  throw new Error('parseSse accepted a block without data');
}

t.test("a failed file's positions are mapped from the compiled JS back to the TypeScript", async (t) => {
  const stack = compiledStack();
  const line = lineOf('test/helpers/service.ts', 'SSE block without data');
  if (process.execArgv.includes('--enable-source-maps')) {
    t.match(stack, `test/helpers/service.ts:${line}:`, 'Node mapped the stack itself');
    return;
  }
  t.match(stack, /dist\/test\/helpers\/service\.js:\d+:\d+/, 'the stack names the compiled file (no source maps in test processes)');
  const mapped = sourcePositions(stack);
  t.match(mapped, new RegExp(`\\(test/helpers/service\\.ts:${line}:\\d+\\)`), 'the stack line names the TypeScript line that threw');
  t.notMatch(mapped, /dist\/test\/helpers\/service\.js/, 'no compiled position is left');

  const compiled = /dist\/test\/helpers\/service\.js:(\d+):(\d+)/.exec(stack)!;
  const at = `  at:\n    fileName: dist/test/helpers/service.js\n    lineNumber: ${compiled[1]}\n    columnNumber: ${compiled[2]}\n    typeName: Test\n`;
  t.match(sourcePositions(at), `  at:\n    fileName: test/helpers/service.ts\n    lineNumber: ${line}\n    columnNumber: `, "tap's at: block is mapped too");

  const elsewhere = 'node_modules/tap/dist/esm/index.js:3:4 and dist/test/no-such-file.js:1:1';
  t.equal(sourcePositions(elsewhere), elsewhere, 'a dependency and a file without a map stay as they are');
});
