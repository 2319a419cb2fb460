import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AppCapabilityFactory } from './app-capability.js';
import { DEFAULT_BUNDLE_DIR, loadBundle, type Bundle } from '../protocol/static-bundle.js';
import { createStaticRoute } from '../protocol/static-route.js';

let loaded: Bundle | undefined;

/**
 * The built console, read on the first request for it and kept for the process: reading and
 * gzipping it cost ~30-50 ms of CPU, which a service nobody opens the console of (a test service,
 * a headless one) would pay at every start. A missing build is read again on the next request,
 * so a build made while the service runs is picked up.
 */
async function builtConsole(): Promise<Bundle | null> {
  return (loaded ??= (await loadBundle()) ?? undefined) ?? null;
}

/**
 * The web console: the built pages of `dist/web` at `/`. It adds no Jobs; the pages are a client
 * of the public Jobs like any other. A missing build is not fatal: `/` then explains how to build.
 */
export const consoleCapability: AppCapabilityFactory = () => {
  if (!existsSync(join(DEFAULT_BUNDLE_DIR, 'index.html'))) console.warn('taskyard: web console not built (dist/web/index.html missing); run `npm run build`');
  return { jobs: [], routes: [createStaticRoute(builtConsole)] };
};
