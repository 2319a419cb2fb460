/** Runs every bench module in `bench/` (each exports `run()`), one after another. */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const modules = readdirSync(dir)
  .filter((f) => f.endsWith('.js') && f !== 'run-all.js' && f !== 'write-report.js')
  .filter((f) => only.length === 0 || only.includes(f.replace(/\.js$/, '')))
  .sort();
for (const file of modules) {
  console.log(`\n##### bench/${file.replace(/\.js$/, '.ts')}`);
  const mod = (await import(new URL(file, import.meta.url).href)) as { run?: () => Promise<void> };
  if (typeof mod.run === 'function') await mod.run();
}
