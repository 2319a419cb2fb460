import t from 'tap';
import { Type } from '@sinclair/typebox';
import { check } from '../../schemas/validator.js';
import type { FromJsonSchema } from '../../schemas/json-schema.js';

/** A plain JSON Schema as Task definitions and plugins write it (no TypeBox symbols). */
const plain = {
  type: 'object',
  properties: {
    x: { type: 'integer' },
    mode: { enum: ['fast', 'slow'], default: 'fast' },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    tags: { type: 'array', items: { type: 'string' } },
  },
  required: ['x'],
  additionalProperties: false,
} as const;

t.test('check() takes plain JSON Schema: validates, fills defaults in a copy, names the problems', async (t) => {
  const input = { x: 1 };
  const filled = check(plain, input, { defaults: true });
  t.same(filled, { ok: true, value: { x: 1, mode: 'fast' } });
  t.same(input, { x: 1 }, "the caller's object is untouched");
  const bad = check(plain, { x: 'one', extra: true });
  t.equal(bad.ok, false);
  if (!bad.ok) {
    t.same(bad.issues.map((i) => i.loc.join('.')).sort(), ['extra', 'x']);
    t.match(bad.issues.find((i) => i.loc[0] === 'extra'), { msg: 'Extra inputs are not permitted' });
  }
  t.throws(() => check({ type: 'nonsense' }, {}), 'an invalid schema throws (plugin installs report it)');
});

t.test('check() with a TypeBox schema types the value; with plain JSON Schema it stays unknown', async (t) => {
  const typed = check(Type.Object({ n: Type.Integer() }), { n: 3 });
  if (t.ok(typed.ok) && typed.ok) t.equal(typed.value.n + 1, 4, 'typed from the schema (this line compiles only because of it)');
  const loose = check({ type: 'object' }, { n: 3 });
  t.ok(loose.ok);
});

// Compile-time checks: `npm run build` fails when FromJsonSchema reads the schema wrongly.
type Plain = FromJsonSchema<typeof plain>;
const full: Plain = { x: 1, mode: 'slow', note: null, tags: ['a'] };
const least: Plain = { x: 1, mode: 'fast' };
// @ts-expect-error x is required
const missing: Plain = { mode: 'fast' };
// @ts-expect-error a field with a default is present after validation
const noDefault: Plain = { x: 1 };
// @ts-expect-error mode is one of the enum's values
const wrongEnum: Plain = { x: 1, mode: 'medium' };
// @ts-expect-error x is an integer
const wrongType: Plain = { x: '1', mode: 'fast' };

t.test('FromJsonSchema reads required, defaults, enums, anyOf and arrays (checked when compiled)', async (t) => {
  t.ok([full, least, missing, noDefault, wrongEnum, wrongType].length === 6);
});
