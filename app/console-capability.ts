import type { AppCapabilityFactory } from './app-capability.js';
import { loadBundle, type Bundle } from '../protocol/static-bundle.js';
import { createStaticRoute } from '../protocol/static-route.js';

let loaded: Bundle | undefined;

/**
 * The web console: the built pages of `dist/web` at `/`. It adds no Jobs; the pages are a client
 * of the public Jobs like any other. A missing build is not fatal: `/` then explains how to build.
 * A loaded build is kept for the process: reading and gzipping it cost each start ~30 ms of CPU,
 * paid over and over by a process that starts many services (a test file).
 */
export const consoleCapability: AppCapabilityFactory = async () => {
  const bundle = loaded ?? (await loadBundle());
  if (bundle !== null) loaded = bundle;
  if (bundle === null) console.warn('taskyard: web console not built (dist/web/index.html missing); run `npm run build`');
  return { jobs: [], routes: [createStaticRoute(bundle)] };
};
