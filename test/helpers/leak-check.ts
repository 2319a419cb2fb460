/**
 * The suite's leak check, loaded into every test process by `.taprc` (`node-arg: --import`).
 *
 * It takes a census of what keeps this process busy (child processes and their descendants,
 * sockets and servers, ref'd timers, file watchers, worker threads) before the test file runs,
 * and again after the file's last teardown; whatever the file added and did not end fails it,
 * named. Things that close asynchronously (a socket whose peer just closed) get a short bounded
 * wait first. Helpers that clean up after a test (a Task left running, found and killed by the
 * service teardown) report what they had to clean through `reportLeak`, so nothing is swept away
 * silently.
 *
 * The check runs at the end of the file, not of each test, because a file-level service starts
 * its spawner and runners lazily inside whichever test first submits. A leak makes the test
 * process exit 1 (tap marks the file `not ok`) and is written under `.tap/leaks/`, where
 * `run-suite` names it in the closing summary.
 */
import { createHook } from 'node:async_hooks';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import t from 'tap';
import { parseStat, type ProcessEntry } from '../../workers/process-tree.js';

/** How long a leftover may take to go away on its own after the file's teardowns. */
const SETTLE_MS = 3_000;
/** Where leak reports go, one file per test process, for `run-suite`. */
export const LEAKS_DIR = '.tap/leaks';
/** Resource kinds that are not leaks: tap's own pipes, stdio, and fs requests in flight. */
const IGNORED = new Set(['TTYWrap', 'PipeWrap', 'FSReqCallback', 'FSReqPromise']);

const reported: string[] = [];

/** Called by a helper that had to end something a test left behind; fails the test file. */
export function reportLeak(what: string): void {
  reported.push(what);
}

/**
 * With TASKYARD_LEAK_ORIGINS=1, the stack that created each live handle is kept and printed with a
 * leak, to find its origin (too slow to keep on for the whole suite).
 */
const origins = new Map<number, { type: string; stack: string }>();
if (process.env['TASKYARD_LEAK_ORIGINS']) {
  createHook({
    init(id, type) {
      if (type === 'PROMISE' || IGNORED.has(type)) return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 40;
      const frames = (new Error().stack ?? '').split('\n').filter((l) => l.includes(' at ') && !l.includes('leak-check') && !l.includes('async_hooks'));
      Error.stackTraceLimit = limit;
      origins.set(id, { type, stack: frames.slice(0, 12).map((l) => l.trim()).join(' | ') });
    },
    destroy(id) {
      origins.delete(id);
    },
  }).enable();
}

function census(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) if (!IGNORED.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * Every process in /proc, read synchronously: this runs at the start and end of every test file
 * and every 20 ms while leftovers settle, where the service's asynchronous `listProcesses` (a
 * promise and four thread-pool trips per process) cost ~20 ms of CPU per scan of ~100 processes
 * and these plain reads ~8 ms. Nothing else runs in this process meanwhile that a blocked loop
 * would delay.
 */
function listProcessesNow(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const entry = parseStat(readFileSync(`/proc/${name}/stat`, 'utf8'));
      if (entry) entries.push(entry);
    } catch {
      // ended meanwhile
    }
  }
  return entries;
}

/** Live (non-zombie) descendants of this process, by pid. */
function descendants(): Set<number> {
  const all = listProcessesNow();
  const mine = new Set<number>([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (mine.has(p.pid) || !mine.has(p.ppid)) continue;
      mine.add(p.pid);
      grew = true;
    }
  }
  mine.delete(process.pid);
  return new Set(all.filter((p) => mine.has(p.pid) && p.state !== 'Z').map((p) => p.pid));
}

function commandLine(pid: number): string {
  let raw = '';
  try {
    raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    // ended meanwhile
  }
  return raw.split('\0').filter(Boolean).join(' ').slice(0, 160) || '?';
}

interface Snapshot {
  resources: Map<string, number>;
  processes: Set<number>;
}

/**
 * What the file added and did not end. While handles are still open (`settling`), processes are
 * not looked for: the caller waits on anyway, and the /proc scan is the costly half.
 */
function leftovers(before: Snapshot, settling = false): string[] {
  const found: string[] = [];
  for (const [kind, n] of census()) {
    const extra = n - (before.resources.get(kind) ?? 0);
    if (extra > 0) found.push(`${extra} × ${kind}`);
  }
  if (settling && found.length > 0) return found;
  for (const pid of descendants()) if (!before.processes.has(pid)) found.push(`process ${pid}: ${commandLine(pid)}`);
  return found;
}

const before: Snapshot = { resources: census(), processes: descendants() };

// Registered before the test file's own teardowns, so it runs after all of them.
t.teardown(async () => {
  let found = leftovers(before, true);
  const deadline = performance.now() + SETTLE_MS;
  while (found.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    found = leftovers(before, true);
  }
  // The report names everything left, processes included.
  if (found.length > 0) found = leftovers(before);
  const all = [...reported, ...found];
  if (all.length === 0) return;
  const file = relative(process.cwd(), process.argv[1] ?? '?');
  const report = `${file} left behind: ${all.join('; ')}`;
  // The report file first: whoever sees the line on stderr finds the file already written.
  mkdirSync(LEAKS_DIR, { recursive: true });
  writeFileSync(`${LEAKS_DIR}/${process.pid}.txt`, `${report}\n`);
  process.exitCode = 1;
  console.error(`leak: ${report}`);
  if (origins.size > 0) for (const o of origins.values()) console.error(`  live ${o.type}: ${o.stack}`);
  // A leftover that is a ref'd handle would keep the file running until the suite's time limit:
  // once tap has written its summary (stdout to a pipe is synchronous here), end the file.
  setTimeout(() => process.exit(1), 1_000).unref();
});
