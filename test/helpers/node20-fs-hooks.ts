/**
 * Module hooks that give `import { globSync } from 'fs'` a Node 20 answer, for test tools built
 * for Node 22. Everything else of `fs` is the real module.
 */
const SHIM = 'taskyard-shim:fs';

interface ResolveContext {
  parentURL?: string;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;
type NextLoad = (url: string, context: unknown) => Promise<{ format?: string; source?: string | ArrayBuffer }>;

export async function resolve(specifier: string, context: ResolveContext, next: NextResolve): Promise<{ url: string; shortCircuit?: boolean }> {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL !== SHIM) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}

export async function load(url: string, context: unknown, next: NextLoad): Promise<{ format?: string; source?: string | ArrayBuffer; shortCircuit?: boolean }> {
  if (url !== SHIM) return next(url, context);
  return {
    format: 'module',
    shortCircuit: true,
    source: `import * as fs from 'node:fs';
export * from 'node:fs';
export default fs.default;
export function globSync() { return []; }
`,
  };
}
