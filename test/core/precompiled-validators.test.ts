import t from 'tap';
import { Ajv, addFormats } from '../../vendor/ajv.js';
import { ConfigFile } from '../../schemas/config.js';
import { RequestEnvelope } from '../../schemas/job-response.js';
import { TaskStatus } from '../../schemas/tasks.js';
import { PRECOMPILED } from '../../schemas/precompiled.js';
import { ajvOptions, check } from '../../schemas/validator.js';
import { startTestService } from '../helpers/service.js';

/**
 * The build generates validators for the schemas every start or first call compiles
 * (schemas/precompile.mjs): they must exist for today's schemas (a build that skipped the step, or
 * a schema edited without regenerating, would quietly cost every start ~0.2 s of CPU again) and
 * answer exactly what ajv's own compile of the same schema answers: the same verdict, the same
 * errors, the same defaults filled.
 */
const DEMO_RECORD = {
  task_id: 'base#demo#20261128T013525382-0000-0ab0', run_id: '212524d88438484d96d7eafaa0b82f76', task_type: 'base', task_name: 'demo',
  config: { x: 2, y: 3, fail: false, task_name: '20261128T013525382-0000-0ab0', source_tasks: '' },
  state: 'succeeded', pid: 5999, created_at: '2026-11-28T01:35:25.383Z', started_at: '2026-11-28T01:35:27.131Z', finished_at: '2026-11-28T01:35:27.181Z',
  result: { result: 5, branch: 'different', operands: ['x', 'y'], artifacts: {} }, error: '', exit_code: 0, log_path: 'base/base#demo#20261128T013525382-0000-0ab0/task.log',
};

const cases = [
  {
    name: 'the configuration',
    schema: ConfigFile,
    values: [
      { service: {} },
      { service: { port: 8420, runner_pool_size: 3 }, jobs: { shell: { enable_serve: false } } },
      { service: { port: 'x', bogus: 1 }, targets: [{ address: 7 }], extra: true },
    ],
  },
  {
    name: 'the request envelope',
    schema: RequestEnvelope,
    values: [{ arguments: {} }, {}, { arguments: 1, target: 2, other: 3 }],
  },
  {
    name: 'a Task status record',
    schema: TaskStatus,
    values: [
      // A record as a demo run writes it, then the same with its defaults left out, then nonsense.
      { ...DEMO_RECORD, steps: [{ name: 'initialize', started_at: '2026-11-28T01:35:27.143Z', finished_at: '2026-11-28T01:35:27.144Z', percentage: 100 }] },
      DEMO_RECORD,
      {},
      { task_id: 'a#b#c', run_id: 'r', task_type: 'a', state: 'nonsense', pid: 'x' },
    ],
  },
];

for (const { name, schema, values } of cases) {
  t.test(`${name}: the build's validator is today's schema's, and answers what ajv's compile answers`, async (t) => {
    const generated = PRECOMPILED.find((p) => p.defaults && p.schema === JSON.stringify(schema));
    t.ok(generated, 'a validator generated from this very schema text ships in dist/schemas/precompiled.js');
    if (!generated) return;
    const ajv = new Ajv(ajvOptions(true));
    addFormats(ajv);
    const fresh = ajv.compile(schema);
    for (const value of values) {
      const [a, b] = [structuredClone(value), structuredClone(value)];
      const verdict = generated.validate(a);
      t.equal(verdict, fresh(b), `${JSON.stringify(value)}: same verdict`);
      t.same(generated.validate.errors ?? null, fresh.errors ?? null, `${JSON.stringify(value)}: same errors`);
      t.same(a, b, `${JSON.stringify(value)}: same defaults filled`);
      // check() answers through it as before: the first value of each case is valid.
      if (value === values[0]) t.ok(check(schema, value, { defaults: true }).ok, 'check() passes it');
    }
  });
}

t.test("Jobs' and built-in Tasks' inputs: the build generated validators for those of today's service", async (t) => {
  const svc = await startTestService(t);
  const has = (schema: unknown) => PRECOMPILED.some((p) => p.defaults && p.schema === JSON.stringify(schema));
  for (const name of ['version', 'submit', 'status', 'wait_task', 'shell']) t.ok(has(svc.registry.get(name)?.job.input), `${name}'s input`);
  for (const task of ['demo', 'sleep']) {
    const { body } = await svc.call('get_task_definition', { task });
    t.ok(body.success && has(body.answer.input_schema), `the ${task} Task's input, as a submit checks it`);
  }
  // A submit answers through them as before.
  const submitted = await svc.call('submit', { task: 'demo', x: 2, y: 'three' });
  t.equal(submitted.body.success, false, 'a bad Task input is still refused');
  t.match(submitted.body.answer, /y/, 'naming the field');
});
