import { createHash } from 'node:crypto';
import t from 'tap';
import { cacheKeyOf, canonicalJson } from '../../supervisor/tasks/cache/cache-key.js';

t.test('canonical JSON sorts keys at every level and writes non-finite numbers as null', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  t.equal(canonicalJson({ x: Number.NaN, y: Number.POSITIVE_INFINITY, u: undefined }), '{"x":null,"y":null}');
});

t.test('the key is the sha256 of the documented parts, whatever their order', async (t) => {
  const parts = { task_type: 'train', registration: 'fit', version: '1.2.0', inputs: { lr: 0.1, source_tasks: 'a#b#c' }, sources: [{ model: 'f'.repeat(64) }] };
  const text = `{"inputs":{"lr":0.1,"source_tasks":"a#b#c"},"registration":"fit","sources":[{"model":"${'f'.repeat(64)}"}],"task_type":"train","v":1,"version":"1.2.0"}`;
  t.equal(cacheKeyOf(parts), createHash('sha256').update(text).digest('hex'), 'as README documents it');
  t.equal(cacheKeyOf({ ...parts, inputs: { source_tasks: 'a#b#c', lr: 0.1 } }), cacheKeyOf(parts), 'input order does not matter');
  t.not(cacheKeyOf({ ...parts, version: '1.2.1' }), cacheKeyOf(parts), 'another plugin version is another key');
  t.not(cacheKeyOf({ ...parts, sources: [{ model: 'e'.repeat(64) }] }), cacheKeyOf(parts), 'another artifact checksum is another key');
  t.not(cacheKeyOf({ ...parts, registration: 'fit2' }), cacheKeyOf(parts));
});
