import { register } from 'node:module';

// Loaded with `node --import`: installs the hooks of ./node20-fs-hooks.js.
register('./node20-fs-hooks.js', import.meta.url);
