import t from 'tap';
import { lazyBuiltin } from '../../core/lazy-builtin.js';

t.test('lazyBuiltin answers the built-in module itself, the same object every time', async (t) => {
  const tls = lazyBuiltin<typeof import('node:tls')>('node:tls');
  const first = tls();
  t.equal(first, (await import('node:tls')).default, 'the module a static import gets');
  t.equal(tls(), first, 'loaded once');
  t.type(first.connect, 'function');
  t.throws(() => lazyBuiltin('node:no-such-module')(), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' }, 'an unknown name fails when asked for, plainly');
});
