/**
 * The runner's `import()`. Its entry (runner-loader.ts) runs the bundle from V8's code cache, and
 * functions compiled from a cache lose Node's dynamic-import callback (`import()` there fails with
 * ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so the entry hands in an `import()` of its own as
 * `__taskyardImport`. Without it (the bundle loaded any other way) this is plain `import()`.
 */
declare const __taskyardImport: ((specifier: string) => Promise<unknown>) | undefined;

/** `import(specifier)`, through the runner entry's own where it gives one. */
export function importModule<T>(specifier: string): Promise<T> {
  return (typeof __taskyardImport === 'function' ? __taskyardImport(specifier) : import(specifier)) as Promise<T>;
}
