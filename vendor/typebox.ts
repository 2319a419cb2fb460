/**
 * TypeBox's schema builder, the only part of it the service runs (its types are imported from
 * '@sinclair/typebox' itself). The build bundles this module into one file (vendor/bundle.mjs):
 * the package is ~200 ES modules, and Node pays ~0.7 ms for each file it loads, so every service
 * and CLI start paid ~150 ms of CPU for it. Built by tsc alone it is a plain re-export, the same
 * builder (TypeBox marks schemas with registered symbols, so both copies' schemas are alike).
 */
export { Type } from '@sinclair/typebox';
