/**
 * Ajv with its formats, the JSON Schema validator behind schemas/validator.ts. Bundled into one
 * file by the build (vendor/bundle.mjs), like vendor/typebox.ts: the two packages are ~70 CommonJS
 * files, ~45 ms of CPU to load one by one at every start. Built by tsc alone it is a plain re-export.
 */
import addFormatsModule from 'ajv-formats';

export { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
// ajv-formats ships CommonJS: under NodeNext the import is its module object, whose `default` is the plugin.
export const addFormats = addFormatsModule.default;
