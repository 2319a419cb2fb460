import { setTimeout as delay } from 'node:timers/promises';
import { defineTask, TaskError } from './task-sdk.js';
import { commandTask } from './command-tasks.js';

/**
 * The native Tasks: `demo` and `sleep` (task_type `base`), and `command` (command-tasks.ts). Schemas are plain JSON Schema so spawning a runner never
 * loads TypeBox (~60 ms here); `defineTask` types each `run`'s input and answer from them.
 */

const demo = defineTask({
  name: 'demo',
  taskType: 'base',
  description:
    'Demonstration Task: adds the integers x and y and reports whether they are equal. ' +
    'With fail=true it fails on purpose with "RuntimeError: Demo failure requested" (exit code 1).',
  input: {
    type: 'object',
    properties: {
      x: { type: 'integer', description: 'First operand' },
      y: { type: 'integer', description: 'Second operand' },
      fail: { type: 'boolean', default: false, description: 'Fail on purpose to demonstrate a failure' },
    },
    required: ['x', 'y'],
  },
  output: {
    type: 'object',
    properties: {
      result: { type: 'integer', description: 'x + y' },
      branch: { type: 'string', description: '"equal" when x equals y, otherwise "different"' },
      operands: { type: 'array', items: { type: 'string' }, description: 'Names of the operands used' },
    },
    required: ['result', 'branch', 'operands'],
  },
  // Records its work as steps, so even the simplest Task shows progress in its status, its
  // events.jsonl, the console and stream_task.
  async run(input, ctx) {
    await ctx.step('initialize', () => {
      ctx.logger.info(`demo: x=${input.x} y=${input.y}`);
      ctx.progress(100);
    });
    if (input.fail) throw new TaskError('RuntimeError', 'Demo failure requested');
    const equal = input.x === input.y;
    let result = 0;
    const add = (name: string, value: number) =>
      ctx.step(name, () => {
        result += value;
        ctx.progress(100);
      });
    if (equal) await add('add_equal_operands', input.x * 2);
    else {
      await add('add_x', input.x);
      await add('add_y', input.y);
    }
    return ctx.step('finish', () => {
      ctx.logger.info(`demo: result=${result}`);
      ctx.progress(100);
      return { result, branch: equal ? 'equal' : 'different', operands: ['x', 'y'] };
    });
  },
});

const sleep = defineTask({
  name: 'sleep',
  taskType: 'base',
  description:
    'Sleeps for the given number of seconds, in `steps` equal parts (default 1). Each part logs one ' +
    'line and updates the progress percentage; useful for long-running and cancellation cases.',
  input: {
    type: 'object',
    properties: {
      seconds: { type: 'number', minimum: 0, maximum: 86400, description: 'Total time to sleep, in seconds' },
      steps: { type: 'integer', minimum: 1, maximum: 100000, description: 'Number of progress updates and log lines' },
    },
    required: ['seconds'],
  },
  output: {
    type: 'object',
    properties: { slept: { type: 'number', description: 'Seconds slept' } },
    required: ['slept'],
  },
  async run(input, ctx) {
    const steps = input.steps ?? 1;
    const slice = (input.seconds * 1000) / steps;
    await ctx.step('sleep', async () => {
      for (let i = 1; i <= steps; i++) {
        await delay(slice);
        ctx.logger.info(`step ${i}/${steps}`);
        ctx.progress((i / steps) * 100);
      }
    });
    return { slept: input.seconds };
  },
});

/** Native definitions: the demos, and `command` (which the catalog lists only where `shell` may be public). */
export const BUILTIN_TASKS = [demo, sleep, commandTask] as const;
