/**
 * The YAML parser and printer (configuration files, the CLI's answers, previews). Bundled into one
 * file by the build (vendor/bundle.mjs), like vendor/typebox.ts: the package is ~70 CommonJS
 * files, ~60 ms of CPU to load one by one in every `taskyard` command. Built by tsc alone it is a
 * plain re-export.
 */
export { parse, stringify } from 'yaml';
