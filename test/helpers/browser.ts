import { spawn } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { startTestService, type TestService, type TestServiceOptions, waitFor } from './service.js';

export const CHROMIUM = process.env['TASKYARD_CHROMIUM'] ?? '/usr/bin/chromium';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const LOCK = join(tmpdir(), 'taskyard-chromium-install.lock');
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

const exists = (path: string) => access(path).then(() => true, () => false);

/** Runs a command to completion; one awaited value with its exit code and the tail of its output. */
function run(cmd: string, args: string[], cwd?: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (b: Buffer) => (output = (output + b.toString()).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (err) => resolve({ code: null, output: String(err) }));
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** Takes the install lock (a directory: mkdir is atomic), breaking it when its owner is dead. */
async function takeLock(): Promise<boolean> {
  try {
    await mkdir(LOCK);
    await writeFile(join(LOCK, 'pid'), String(process.pid));
    return true;
  } catch {
    const owner = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => 'NaN'));
    if (Number.isInteger(owner) && !(await exists(`/proc/${owner}`))) await rm(LOCK, { recursive: true, force: true });
    return false;
  }
}

/**
 * Makes sure Debian's chromium is installed: CI starts on a fresh machine as root, so the first
 * test file that needs it runs `apt-get install -y chromium` while the others wait on the lock.
 * A browser is never downloaded by Playwright.
 */
export async function ensureChromium(): Promise<void> {
  if (await exists(CHROMIUM)) return;
  const deadline = Date.now() + 15 * 60_000;
  while (!(await takeLock())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for another test to install chromium (lock ${LOCK})`);
    await new Promise((r) => setTimeout(r, 500));
    if (await exists(CHROMIUM)) return;
  }
  try {
    if (await exists(CHROMIUM)) return;
    if (process.getuid?.() !== 0) throw new Error(`${CHROMIUM} is missing and installing it needs root: run \`apt-get install -y chromium\` (Debian) first`);
    let result = await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium']);
    if (result.code !== 0) {
      await run('apt-get', ['update']);
      result = await run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium']);
    }
    if (result.code !== 0 || !(await exists(CHROMIUM))) throw new Error(`could not install chromium with apt-get (exit ${result.code}):\n${result.output}`);
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

/** Builds the console bundle when `dist/web` is missing (tests run from `dist/` after `tsc` alone). */
export async function ensureConsoleBuilt(): Promise<void> {
  if (await exists(join(REPO, 'dist/web/index.html'))) return;
  const result = await run(process.execPath, ['web/build.mjs'], REPO);
  if (result.code !== 0) throw new Error(`building the console failed:\n${result.output}`);
}

/** Starts a headless Debian chromium for this test (closed at teardown). */
export async function launchBrowser(t: Test): Promise<Browser> {
  await ensureChromium();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  t.teardown(() => browser.close());
  return browser;
}

export interface ConsoleSession {
  readonly svc: TestService;
  readonly page: Page;
  /** Errors the page raised or logged (script errors, CSP violations, failed loads). */
  readonly errors: string[];
}

/** A real service plus a chromium page; `open` goes to the console URL `taskyard serve` prints. */
export async function startConsole(t: Test, opts: TestServiceOptions & { open?: boolean } = {}): Promise<ConsoleSession> {
  await ensureConsoleBuilt();
  const svc = await startTestService(t, opts);
  const browser = await launchBrowser(t);
  const context = await browser.newContext({ viewport: { width: 1360, height: 860 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // 401s are expected in auth tests; anything else logged as an error is a defect.
    if (msg.type() === 'error' && !/status of 401/.test(msg.text())) errors.push(`console: ${msg.text()}`);
  });
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
