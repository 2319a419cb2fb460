import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_CAPABILITIES } from '../../app/default-capabilities.js';
import { PACKAGE_ROOT } from '../../core/build-info.js';
import { defineJob } from '../../core/job.js';
import { ok } from '../../schemas/job-response.js';
import type { CapabilityFactory } from '../../app/capability-contract.js';
import { startTestService } from '../helpers/service.js';
import { testJobs } from '../helpers/test-jobs.js';

/**
 * The official MCP conformance scenarios, once (not on every front end): what in them depends on
 * the front end (Host and Origin checks, progress over SSE) mcp.test.ts and mcp-progress.test.ts
 * prove on each.
 */

const capabilities = [...DEFAULT_CAPABILITIES, testJobs];

/** The tool the conformance scenario `tools-call-with-progress` calls: three steps 50 ms apart. */
const conformanceJobs: CapabilityFactory = () => ({
  jobs: [
    defineJob({
      name: 'test_tool_with_progress',
      output: Type.String(),
      description: 'Reports progress 0, 50 and 100 about 50 ms apart.',
      input: Type.Object({}),
      flags: { requires_auth: false },
      run: async (_args, ctx) => {
        for (const percentage of [0, 50, 100]) {
          if (percentage > 0) await delay(50);
          await ctx.emit({ kind: 'progress', name: 'conformance', started_at: null, finished_at: null, percentage });
        }
        return ok('done');
      },
    }),
  ],
});

/**
 * The official conformance runner targets Node 22 (it imports fs.globSync); a tiny module hook
 * supplies that one name so the real scenarios run unchanged on Node 20. They run in one process
 * (test/helpers/conformance-scenarios.ts), each scenario as its own run of the runner's CLI.
 */
t.test('official MCP conformance scenarios that apply to this server', async (t) => {
  const svc = await startTestService(t, { capabilities: [...capabilities, conformanceJobs], token: null, config: { jobs: { version: { requires_auth: false } } } });
  const cli = join(PACKAGE_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const shim = fileURLToPath(new URL('../helpers/node20-fs-shim.js', import.meta.url));
  const scenarios = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'tools-call-with-progress'];
  const driver = fileURLToPath(new URL('../helpers/conformance-scenarios.js', import.meta.url));
  // The runner's results go to stdout, one section per scenario; stderr only explains a failure.
  const output = await new Promise<{ code: number | null; text: string; errors: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', shim, driver, cli, `${svc.url}/mcp`, ...scenarios], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    let errors = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (errors += d.toString()));
    child.on('close', (code) => resolve({ code, text, errors }));
  });
  t.equal(output.code, 0, `the runner ran every scenario ${output.errors.slice(-2000)}`);
  let rest = output.text;
  for (const scenario of scenarios) {
    const end = new RegExp(`^=== ${scenario} exit (\\d+)$`, 'm').exec(rest);
    const text = end ? rest.slice(0, end.index) : rest;
    rest = end ? rest.slice(end.index + end[0].length) : '';
    const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(text);
    t.ok(summary, `${scenario}: runner printed a summary`);
    if (summary?.[3] !== '0') t.comment(`${text.slice(-3000)}\n${output.errors.slice(-2000)}`);
    t.equal(summary?.[3], '0', `${scenario}: no failed checks`);
    t.equal(summary?.[1], summary?.[2], `${scenario}: all checks passed`);
    t.equal(end?.[1], '0', `${scenario}: exit code`);
  }
});
