import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The package root: this file is `<root>/core/*.ts`, compiled to `<root>/dist/core/*.js`. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The installed package's version, read once from package.json. */
export const PACKAGE_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
