import t from 'tap';
import { buildOrder, composeCapabilities, type Composable, type PlainCapability } from '../../app/compose-capabilities.js';

/** Services of these tests: a number and a text, each provided by one entry. */
interface Probe {
  count: number;
  label: string;
}

/** What an entry saw when it was built, and the log of builds and closes. */
interface Built {
  readonly name: string;
  readonly given: Partial<Probe>;
  close(): Promise<void>;
}

type Entry = Composable<null, Probe, Built> | PlainCapability<null, Built>;

function entry(log: string[], name: string, opts: { needs?: Array<keyof Probe>; uses?: Array<keyof Probe>; provides?: Partial<Probe>; fails?: boolean } = {}): Composable<null, Probe, Built> {
  const provided = opts.provides ?? {};
  return {
    name,
    needs: opts.needs ?? [],
    uses: opts.uses ?? [],
    provides: Object.keys(provided) as Array<keyof Probe>,
    build: async (_env, given) => {
      if (opts.fails) throw new Error(`${name} failed to build`);
      log.push(`build ${name}`);
      return { capability: { name, given, close: async () => void log.push(`close ${name}`) }, provided };
    },
  };
}

t.test('a provider listed after its user is built first; the list order is kept', async (t) => {
  const log: string[] = [];
  const list: Entry[] = [entry(log, 'user', { needs: ['count'] }), entry(log, 'plain-free'), entry(log, 'provider', { provides: { count: 7 } })];
  const composed = await composeCapabilities(list, null);
  t.same(log, ['build provider', 'build user', 'build plain-free'], 'built in dependency order, otherwise in list order');
  t.same(composed.capabilities.map((c) => c.name), ['user', 'plain-free', 'provider'], 'answered in list order');
  t.same(composed.capabilities[0]!.given, { count: 7 }, 'the user is given what it needs');
  t.same(composed.capabilities[1]!.given, {}, 'an entry is given only what it declares');
  await composed.close();
  t.same(log.slice(3), ['close plain-free', 'close user', 'close provider'], 'closed users before providers');
});

t.test('an optional service is given when provided (built first) and left out otherwise', async (t) => {
  const log: string[] = [];
  const withIt = await composeCapabilities([entry(log, 'user', { uses: ['label'] }), entry(log, 'labeller', { provides: { label: 'x' } })], null);
  t.same(log, ['build labeller', 'build user']);
  t.same(withIt.capabilities[0]!.given, { label: 'x' });
  const without = await composeCapabilities([entry(log, 'alone', { uses: ['label'] })], null);
  t.same(without.capabilities[0]!.given, {});
});

t.test('plain functions need and provide nothing', async (t) => {
  const plain: PlainCapability<null, Built> = function plainOne() {
    return { name: 'plainOne', given: {}, close: async () => undefined };
  };
  const composed = await composeCapabilities<null, Probe, Built>([plain], null);
  t.equal(composed.capabilities[0]!.name, 'plainOne');
});

t.test('a missing provider, two providers and a cycle are errors that name the capabilities', async (t) => {
  const log: string[] = [];
  t.throws(() => buildOrder([entry(log, 'plugins', { needs: ['count'] })]), {
    message: "capability plugins needs the service 'count', which no listed capability provides (list the capability that provides it)",
  });
  t.throws(() => buildOrder([entry(log, 'a', { provides: { count: 1 } }), entry(log, 'b', { provides: { count: 2 } })]), { message: "capabilities a and b both provide the service 'count'" });
  const ring = [entry(log, 'a', { needs: ['label'], provides: { count: 1 } }), entry(log, 'b', { needs: ['count'], provides: { label: 'l' } })];
  t.throws(() => buildOrder(ring), { message: 'capabilities need each other in a cycle: a → b → a' });
  t.throws(() => buildOrder([entry(log, 'self', { uses: ['count'], provides: { count: 1 } })]), { message: 'capabilities need each other in a cycle: self → self' });
  await t.rejects(composeCapabilities(ring, null), { message: /cycle/ });
  t.same(log, [], 'nothing was built');
});

t.test('a capability that fails to build closes those built before it, users first', async (t) => {
  const log: string[] = [];
  const list = [entry(log, 'provider', { provides: { count: 1 } }), entry(log, 'user', { needs: ['count'] }), entry(log, 'broken', { needs: ['count'], fails: true })];
  await t.rejects(composeCapabilities(list, null), { message: 'broken failed to build' });
  t.same(log, ['build provider', 'build user', 'close user', 'close provider']);
});

t.test('a capability that declares a service but does not provide it is an error', async (t) => {
  const log: string[] = [];
  const liar: Composable<null, Probe, Built> = { ...entry(log, 'liar'), provides: ['count'] };
  await t.rejects(composeCapabilities([liar], null), { message: "capability liar declares the service 'count' but did not provide it" });
  t.same(log, ['build liar', 'close liar'], 'what it built is closed');
});
