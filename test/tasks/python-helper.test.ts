import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { TASK_REPORTS, type TaskReport } from '../../runner/task-protocol.js';

const HELPER_DIR = fileURLToPath(new URL('../../../python', import.meta.url));

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** What it wrote on fd 3, each line checked as the runner checks it. */
  reports: TaskReport[];
}

/** Runs `python3 -c code` with the helper importable; with `channel`, fd 3 is a pipe read here, as a runner hands it. */
function python(code: string, opts: { channel: boolean; onReport?: (r: TaskReport, kill: () => void) => void } = { channel: true }): Promise<Ran> {
  const { TASKYARD_PROTOCOL_FD: _inherited, ...base } = process.env;
  const env = { ...base, PYTHONPATH: HELPER_DIR, ...(opts.channel ? { TASKYARD_PROTOCOL_FD: '3', TASKYARD_PROTOCOL_VERSION: '1' } : {}) };
  const child = spawn('python3', ['-c', code], { env, stdio: ['ignore', 'pipe', 'pipe', opts.channel ? 'pipe' : 'ignore'] });
  let stdout = '';
  let stderr = '';
  let pending = '';
  const reports: TaskReport[] = [];
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdio[3]?.on('data', (c: Buffer) => {
    const lines = (pending + c.toString()).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const checked = TASK_REPORTS.parse(line);
      if (!checked.ok) throw new Error(`the helper wrote a line the runner refuses: ${checked.error}`);
      reports.push(checked.message);
      opts.onReport?.(checked.message, () => child.kill('SIGTERM'));
    }
  });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, reports })));
}

t.test('every call writes one report the runner accepts', async (t) => {
  const ran = await python(`
import math, taskyard_task as tt
class Scalar:  # a NumPy or PyTorch scalar: it has item()
    def item(self): return 0.5
with tt.step("outer"):
    tt.progress(10)
    @tt.step
    def inner(): return 7
    assert inner() == 7
tt.metric("loss", Scalar(), step=3)
tt.metric("loss", math.nan)
tt.artifact("model", tt.task_dir() + "/model.bin")
tt.output({"a": 1}, b=[1, math.inf])
tt.log("hello", level="warning")
for bad in (lambda: tt.progress(101), lambda: tt.progress(True), lambda: tt.step("")):
    try:
        bad()
        raise SystemExit("no error")
    except ValueError:
        pass
`);
  t.equal(ran.code, 0, ran.stderr);
  t.same(ran.reports, [
    { type: 'step_start', name: 'outer' },
    { type: 'progress', percentage: 10 },
    { type: 'step_start', name: 'inner' },
    { type: 'step_end', name: 'inner' },
    { type: 'step_end', name: 'outer' },
    { type: 'metric', name: 'loss', value: 0.5, step: 3 },
    { type: 'metric', name: 'loss', value: null },
    { type: 'artifact', name: 'model', path: 'model.bin' },
    { type: 'output', values: { a: 1, b: [1, null] } },
    { type: 'log', message: 'hello', level: 'warning' },
  ]);
});

t.test('an uncaught exception is reported as the error; Python still prints the traceback and exits 1', async (t) => {
  const ran = await python('import taskyard_task\nraise ValueError("lr must be positive")');
  t.equal(ran.code, 1);
  t.same(ran.reports, [{ type: 'error', error_type: 'ValueError', message: 'lr must be positive' }]);
  t.match(ran.stderr, /Traceback[\s\S]*ValueError: lr must be positive/);
  const exits = await python('import sys, taskyard_task\nsys.exit(4)');
  t.same([exits.code, exits.reports], [4, []], 'sys.exit is not an error report');
});

t.test('SIGTERM raises Cancelled (a KeyboardInterrupt) so clean-ups run; it is not reported as an error', async (t) => {
  const ran = await python(`
import time, taskyard_task as tt
try:
    tt.log("ready")
    time.sleep(60)
except KeyboardInterrupt as e:
    print("cleaned up after", type(e).__name__, flush=True)
    raise
`, { channel: true, onReport: (r, kill) => r.type === 'log' && kill() });
  t.match(ran.stdout, /cleaned up after Cancelled/);
  t.same(ran.reports, [{ type: 'log', message: 'ready', level: 'info' }], 'no error report for a cancel');
  t.not(ran.code, 0);
});

t.test('outside taskyard every call prints what it would report, so the script runs by hand', async (t) => {
  const ran = await python('import taskyard_task as tt\nwith tt.step("s"):\n    tt.metric("m", 1)\nprint(tt.inputs())\nraise RuntimeError("plain")', { channel: false });
  t.equal(ran.code, 1);
  t.match(ran.stdout, /\[taskyard\] \{"type":"step_start","name":"s"\}\n\[taskyard\] \{"type":"metric","name":"m","value":1\.0\}\n\[taskyard\] \{"type":"step_end","name":"s"\}\n\{\}/);
  t.notMatch(ran.stdout, /"type":"error"/, 'no error report outside taskyard: Python alone says it');
});
