import t from 'tap';
import { splitArgs } from '../../bin/cli-args.js';
import { UsageError } from '../../bin/cli-errors.js';
import { checkRequired, parseFields, parseJsonArguments } from '../../bin/field-values.js';
import type { SchemaNode } from '../../bin/schema-node.js';

const schema: SchemaNode = {
  type: 'object',
  properties: {
    task_id: { type: 'string' },
    count: { type: 'integer' },
    ratio: { type: 'number' },
    verbose: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    sizes: { type: 'array', items: { type: 'integer' } },
    options: { type: 'object' },
    label: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    limit: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    anything: {},
  },
};

t.test('values follow the schema types', async (t) => {
  t.same(parseFields(['--task-id', '007', '--count', '3', '--ratio=0.5', '--options', '{"a":[1]}'], schema), { task_id: '007', count: 3, ratio: 0.5, options: { a: [1] } });
  t.same(parseFields(['--task_id', 'x'], schema), { task_id: 'x' }, 'underscore spelling too');
  t.same(parseFields(['--label', 'null', '--limit', 'null'], schema), { label: null, limit: null });
  t.same(parseFields(['--label', 'plain text', '--anything', 'not json'], schema), { label: 'plain text', anything: 'not json' });
  t.same(parseFields(['--anything', '[1,2]'], schema), { anything: [1, 2] });
});

t.test('booleans stand alone or take true/false', async (t) => {
  t.same(parseFields(['--verbose'], schema), { verbose: true });
  t.same(parseFields(['--verbose', '--count', '1'], schema), { verbose: true, count: 1 });
  t.same(parseFields(['--verbose', 'false'], schema), { verbose: false });
  t.same(parseFields(['--no-verbose'], schema), { verbose: false });
  t.same(parseFields(['--verbose=false'], schema), { verbose: false });
});

t.test('repeated flags build arrays', async (t) => {
  t.same(parseFields(['--tags', 'a', '--tags', 'b'], schema), { tags: ['a', 'b'] });
  t.same(parseFields(['--sizes', '1', '--sizes', '[2,3]'], schema), { sizes: [1, 2, 3] });
  t.same(parseFields(['--tags', '[1]'], schema), { tags: [1] }, 'a JSON array is taken whole (the service validates items)');
});

t.test('mistakes are usage errors', async (t) => {
  t.throws(() => parseFields(['--nope', '1'], schema), new UsageError('unknown parameter --nope'));
  t.throws(() => parseFields(['--count', 'many'], schema), UsageError);
  t.throws(() => parseFields(['--count'], schema), new UsageError('--count needs a value'));
  t.throws(() => parseFields(['--count', '1', '--count', '2'], schema), UsageError);
  t.throws(() => parseFields(['stray'], schema), UsageError);
  t.throws(() => parseFields(['--no-count'], schema), UsageError);
  t.throws(() => parseJsonArguments('[1]'), UsageError);
  t.throws(() => parseJsonArguments('{'), UsageError);
});

t.test('a schema that declares extra fields takes any flag (submit and its Task inputs)', async (t) => {
  const submit: SchemaNode = { type: 'object', properties: { task: { type: 'string' } }, additionalProperties: true };
  t.same(parseFields(['--task', 'demo', '--x', '2', '--y', '3', '--fail', '--task-name', 'run-1', '--note', 'plain text'], submit), {
    task: 'demo',
    x: 2,
    y: 3,
    fail: true,
    task_name: 'run-1',
    note: 'plain text',
  });
  t.throws(() => parseFields(['--x', '2'], { ...submit, additionalProperties: false }), new UsageError('unknown parameter --x'));
});

t.test('--json gives a base that flags override', async (t) => {
  t.same(parseFields(['--count', '2'], schema, parseJsonArguments('{"count":1,"ratio":2}')), { count: 2, ratio: 2 });
});

t.test('global options are found anywhere', async (t) => {
  t.same(splitArgs(['--url', 'http://h:1', 'shell', '--command', 'ls', '--stream', '--token=abc']), {
    job: 'shell',
    options: { url: 'http://h:1', token: 'abc', stream: true, follow: false, help: false },
    fields: ['--command', 'ls'],
  });
  t.throws(() => splitArgs(['--command', 'ls']), UsageError, 'parameters before the Job name');
  t.throws(() => splitArgs(['version', '--url']), UsageError);
  t.throws(() => splitArgs(['version', '--url', 'a', '--target', 'b']), UsageError);
});

t.test('repeats: source_tasks joins with commas, undeclared extra fields collect an array', async (t) => {
  const submit = { type: 'object', properties: { task: { type: 'string' }, source_tasks: { type: 'string' } }, additionalProperties: true };
  t.same(parseFields(['--source-tasks', 'a#b#c', '--source-tasks', 'a#b#d'], submit), { source_tasks: 'a#b#c,a#b#d' });
  t.same(parseFields(['--seed', '1', '--seed', '2', '--seed', '3'], submit), { seed: [1, 2, 3] });
  t.throws(() => parseFields(['--task', 'a', '--task', 'b'], submit), /--task is given more than once/);
});

t.test('checkRequired names the missing flags; defaults count as given', async (t) => {
  const schema = { type: 'object', properties: { task_id: { type: 'string' }, run_id: { type: 'string' }, poll: { type: 'number', default: 1 } }, required: ['task_id', 'run_id', 'poll'] };
  t.throws(() => checkRequired({}, schema), { message: 'missing required --task-id, --run-id' });
  t.doesNotThrow(() => checkRequired({ task_id: 'x', run_id: 'y' }, schema));
});
