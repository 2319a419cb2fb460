/**
 * Keeps docs/explanation/performance-figures.md: reads what `run-all.js` prints on its standard
 * input, passes it through to standard output as it comes, and then writes each bench's figures
 * into the page with the date and the machine they were measured on. A bench that did not run
 * keeps its last figures, so running one bench updates one section:
 *
 *   node dist/bench/run-all.js task-metrics | node dist/bench/write-report.js [--out FILE]
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const DEFAULT_OUT = fileURLToPath(new URL('../../docs/explanation/performance-figures.md', import.meta.url));
/** Everything after this line is kept as it is: figures recorded before the page was written by bench/. */
const KEPT = '<!-- kept by write-report: figures recorded by hand -->';
const HEADER = `# Performance figures

This page is written by \`bench/write-report.ts\` from what the benchmarks print (how they
measure and why: [Performance](performance.md)). Each section holds one bench's latest output,
with the date and the machine it ran on; figures measured on different machines or under
different loads do not compare, ratios within one run do. To update a section, run its bench
through the writer:

\`\`\`text
npm run build
node dist/bench/run-all.js task-metrics | node dist/bench/write-report.js
\`\`\`
`;

/** The machine in one line: what a figure needs beside it to mean anything. */
function machine(): string {
  const cores = cpus();
  const gib = (totalmem() / 2 ** 30).toFixed(1);
  const load = loadavg().map((l) => l.toFixed(1)).join(' ');
  return `${cores.length} cores (${cores[0]?.model.trim() ?? 'unknown CPU'}), ${gib} GiB memory, Node ${process.version}, Linux ${release()}, load average ${load} at the end`;
}

/** Splits run-all's output at its `##### bench/NAME.ts` lines: bench name → what it printed. */
function benchOutputs(text: string): Map<string, string> {
  const outputs = new Map<string, string>();
  for (const [, name, body] of text.matchAll(/^##### bench\/([\w-]+)\.ts\n([\s\S]*?)(?=^##### bench\/|(?![\s\S]))/gm)) {
    outputs.set(name!, body!.trim());
  }
  return outputs;
}

function section(name: string, body: string): string {
  return `## bench/${name}.ts\n\n<!-- bench:${name} -->\n${body}\n<!-- /bench:${name} -->\n`;
}

/** The page with the sections of `outputs` written anew and every other section kept. */
function mergedPage(page: string, outputs: Map<string, string>, measured: string): string {
  const sections = new Map<string, string>();
  for (const [, name, body] of page.matchAll(/<!-- bench:([\w-]+) -->\n([\s\S]*?)\n<!-- \/bench:\1 -->/g)) sections.set(name!, body!);
  for (const [name, output] of outputs) sections.set(name, `${measured}\n\n\`\`\`text\n${output.replace(/```/g, "'''")}\n\`\`\``);
  const kept = page.includes(KEPT) ? page.slice(page.indexOf(KEPT)) : `${KEPT}\n`;
  const body = [...sections.keys()].sort().map((name) => section(name, sections.get(name)!));
  return [HEADER, ...body, kept].join('\n');
}

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = values.out ?? DEFAULT_OUT;
let text = '';
for await (const chunk of process.stdin) {
  process.stdout.write(chunk as Buffer);
  text += (chunk as Buffer).toString();
}
const outputs = benchOutputs(text);
if (outputs.size === 0) {
  console.error('write-report: no "##### bench/NAME.ts" line on standard input; pipe run-all.js into it');
  process.exit(2);
}
const page = await readFile(out, 'utf8').catch(() => '');
const measured = `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine()}.`;
await writeFile(`${out}.tmp`, mergedPage(page, outputs, measured));
await rename(`${out}.tmp`, out);
console.error(`write-report: ${[...outputs.keys()].join(', ')} written to ${out}`);
