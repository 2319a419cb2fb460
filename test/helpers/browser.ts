import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import tap, { type Test } from 'tap';
import { ensureDebianPackages, exists, runCommand } from './debian-packages.js';
import { startTestService, type TestService, type TestServiceOptions, waitFor } from './service.js';

export const CHROMIUM = process.env['TASKYARD_CHROMIUM'] ?? '/usr/bin/chromium';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

/** Makes sure Debian's chromium is installed (a browser is never downloaded by Playwright). */
export const ensureChromium = (): Promise<void> => ensureDebianPackages(['chromium'], () => exists(CHROMIUM));

/** Builds the console bundle when `dist/web` is missing (tests run from `dist/` after `tsc` alone). */
export async function ensureConsoleBuilt(): Promise<void> {
  if (await exists(join(REPO, 'dist/web/index.html'))) return;
  const result = await runCommand(process.execPath, ['web/build.mjs'], REPO);
  if (result.code !== 0) throw new Error(`building the console failed:\n${result.output}`);
}

/**
 * Playwright is CommonJS: an ESM `import` of it makes Node scan its 3.6 MB bundle for export names
 * twice before loading it (~0.3 s of CPU per test file); `require` loads it without the scan.
 */
const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core');

let shared: Promise<Browser> | undefined;

/**
 * The file's headless Debian chromium: started by the first test that asks (~0.6 s of CPU per
 * start and close), closed when the whole file ends. Tests take turns on one page of it, or have a
 * context of their own (`startConsole`).
 */
export function launchBrowser(): Promise<Browser> {
  shared ??= (async () => {
    await ensureChromium();
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
    // A root teardown added now runs before the leak check's (registered first, run last).
    tap.teardown(() => browser.close());
    return browser;
  })();
  return shared;
}

export interface ConsoleSession {
  readonly svc: TestService;
  readonly page: Page;
  /** Errors the page raised or logged (script errors, CSP violations, failed loads). */
  readonly errors: string[];
}

export interface ConsoleOptions extends TestServiceOptions {
  /** Go to the console URL `taskyard serve` prints (default true). */
  open?: boolean;
  /**
   * A service the file already started, for tests that need none of their own (a service costs
   * more to start than a browser context).
   */
  service?: TestService;
  /**
   * A browser context of the test's own (default false), for tests of what a browser keeps:
   * tokens, cookies, storage. Other tests share the file's one page (`reusedPage`).
   */
  isolated?: boolean;
}

/** Page events a test may listen to; a reused page drops the test's listeners when it ends. */
const TEST_EVENTS = ['request', 'response', 'requestfinished', 'requestfailed', 'dialog', 'framenavigated', 'load'] as const;

let reused: Promise<Page> | undefined;

async function newPage(t: Test | undefined): Promise<Page> {
  const context = await (await launchBrowser()).newContext({ viewport: { width: 1360, height: 860 }, deviceScaleFactor: 1 });
  if (t) t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

/**
 * The file's one shared page. A new page costs chromium a renderer and ~3 s of CPU here, while a
 * navigation on a page it has costs a fraction of that; so tests that do not test what a browser
 * keeps take turns on this page. Each still starts from a fresh document (the page is left on
 * about:blank between tests), with no storage, cookies, routes or listeners of the test before.
 */
function reusedPage(): Promise<Page> {
  reused ??= newPage(undefined);
  return reused;
}

/** Leaves the shared page as a new one: nothing a test set up or stored outlives the test. */
async function releasePage(page: Page): Promise<void> {
  for (const event of TEST_EVENTS) page.removeAllListeners(event);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  // Run in the page: a string, which the console's CSP allows (page.evaluate is not page script).
  await page.evaluate('sessionStorage.clear(); localStorage.clear()').catch(() => undefined);
  await page.context().clearCookies();
  await page.goto('about:blank');
}

/** A real service (fresh, or `opts.service`) plus a chromium page: the file's shared one, or one in a context of its own (`opts.isolated`). */
export async function startConsole(t: Test, opts: ConsoleOptions = {}): Promise<ConsoleSession> {
  await ensureConsoleBuilt();
  const svc = opts.service ?? (await startTestService(t, opts));
  const page = opts.isolated ? await newPage(t) : await reusedPage();
  const errors: string[] = [];
  const onError = (err: Error) => errors.push(`pageerror: ${err.message}`);
  const onConsole = (msg: ConsoleMessage) => {
    // 401s are expected in auth tests; anything else logged as an error is a defect.
    if (msg.type() === 'error' && !/status of 401/.test(msg.text())) errors.push(`console: ${msg.text()}`);
  };
  page.on('pageerror', onError);
  page.on('console', onConsole);
  if (!opts.isolated) {
    t.teardown(async () => {
      await releasePage(page);
      page.off('pageerror', onError);
      page.off('console', onConsole);
    });
  }
  if (opts.open !== false) {
    await page.goto(`${svc.url}/#token=${encodeURIComponent(svc.token ?? '')}`);
    await page.waitForSelector('.topbar');
  }
  return { svc, page, errors };
}

/** Saves a screenshot of the page under `docs/` when TASKYARD_SCREENSHOTS=1 (the README shows them). */
export async function screenshot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  if (process.env['TASKYARD_SCREENSHOTS'] !== '1') return;
  await mkdir(join(REPO, 'docs'), { recursive: true });
  await page.screenshot({ path: join(REPO, 'docs', `console-${name}.png`), fullPage: opts.fullPage ?? false });
}

export { waitFor };
