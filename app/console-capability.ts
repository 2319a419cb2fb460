import type { AppCapabilityFactory } from './app-capability.js';
import { loadBundle } from '../protocol/static-bundle.js';
import { createStaticRoute } from '../protocol/static-route.js';

/**
 * The web console: the built pages of `dist/web` at `/`. It adds no Jobs; the pages are a client
 * of the public Jobs like any other. A missing build is not fatal: `/` then explains how to build.
 */
export const consoleCapability: AppCapabilityFactory = async () => {
  const bundle = await loadBundle();
  if (bundle === null) console.warn('taskyard: web console not built (dist/web/index.html missing); run `npm run build`');
  return { jobs: [], routes: [createStaticRoute(bundle)] };
};
