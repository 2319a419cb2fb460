/**
 * Builds capabilities that hand each other services: each declares which services it needs, which
 * it uses when present, and which it provides. Providers are built before their users, whatever
 * the order of the list; the list's order is kept for everything else (the catalog, the routes).
 * Generic over the environment and the service map, so the ordering rules are tested on their own.
 */

/** A capability as the composer sees it: names of services, and how to build it from them. */
export interface Composable<E, S, C> {
  readonly name: string;
  readonly needs: readonly (keyof S)[];
  readonly uses: readonly (keyof S)[];
  readonly provides: readonly (keyof S)[];
  build(env: E, given: Partial<S>): Promise<Made<S, C>>;
}

/** A built capability and the services it provides. */
export interface Made<S, C> {
  readonly capability: C;
  readonly provided: Partial<S>;
}

/** A capability that needs and provides nothing: a plain function of the environment. */
export type PlainCapability<E, C> = (env: E) => C | Promise<C>;

interface Closable {
  close?(): Promise<void>;
}

/** The built capabilities, in the order they were listed; `close` stops them, users before providers. */
export interface Composed<C> {
  readonly capabilities: readonly C[];
  close(): Promise<void>;
}

function declared<E, S, C>(entry: Composable<E, S, C> | PlainCapability<E, C>): Composable<E, S, C> {
  if (typeof entry !== 'function') return entry;
  return { name: entry.name || 'anonymous', needs: [], uses: [], provides: [], build: async (env) => ({ capability: await entry(env), provided: {} }) };
}

/** Which entry provides each service; two providers of one service are an error. */
function providersOf<E, S, C>(entries: readonly Composable<E, S, C>[]): Map<keyof S, number> {
  const providers = new Map<keyof S, number>();
  entries.forEach((entry, i) => {
    for (const service of entry.provides) {
      const other = providers.get(service);
      if (other !== undefined) throw new Error(`capabilities ${entries[other]!.name} and ${entry.name} both provide the service '${String(service)}'`);
      providers.set(service, i);
    }
  });
  return providers;
}

/**
 * The order to build in: each entry after the providers of what it needs and uses, otherwise in
 * list order. A need nobody provides, and capabilities that need each other, are errors naming them.
 */
export function buildOrder<E, S, C>(entries: readonly Composable<E, S, C>[]): number[] {
  const providers = providersOf(entries);
  const order: number[] = [];
  const state = new Map<number, 'visiting' | 'done'>();
  const visit = (i: number, path: readonly number[]): void => {
    if (state.get(i) === 'done') return;
    const entry = entries[i]!;
    if (state.get(i) === 'visiting') {
      const ring = [...path.slice(path.indexOf(i)), i].map((j) => entries[j]!.name);
      throw new Error(`capabilities need each other in a cycle: ${ring.join(' → ')}`);
    }
    state.set(i, 'visiting');
    for (const service of entry.needs) {
      const provider = providers.get(service);
      if (provider === undefined) throw new Error(`capability ${entry.name} needs the service '${String(service)}', which no listed capability provides (list the capability that provides it)`);
      visit(provider, [...path, i]);
    }
    for (const service of entry.uses) {
      const provider = providers.get(service);
      if (provider !== undefined) visit(provider, [...path, i]);
    }
    state.set(i, 'done');
    order.push(i);
  };
  entries.forEach((_, i) => visit(i, []));
  return order;
}

/** The services an entry is given: those it needs or uses that are built. */
function givenTo<E, S, C>(entry: Composable<E, S, C>, services: Partial<S>): Partial<S> {
  const given: Partial<S> = {};
  for (const service of [...entry.needs, ...entry.uses]) if (services[service] !== undefined) given[service] = services[service];
  return given;
}

/**
 * Builds every entry in dependency order, one at a time, and hands each what it declared. If one
 * fails, those already built are closed (users first) and the error is thrown.
 */
export async function composeCapabilities<E, S, C extends Closable>(list: readonly (Composable<E, S, C> | PlainCapability<E, C>)[], env: E): Promise<Composed<C>> {
  const entries = list.map((entry) => declared<E, S, C>(entry));
  const order = buildOrder(entries);
  const built = new Map<number, C>();
  const services: Partial<S> = {};
  const closeBuilt = async () => {
    for (const i of [...built.keys()].reverse()) await built.get(i)!.close?.();
  };
  try {
    for (const i of order) {
      const entry = entries[i]!;
      const { capability, provided } = await entry.build(env, givenTo(entry, services));
      built.set(i, capability);
      for (const service of entry.provides) {
        const value = provided[service];
        if (value === undefined) throw new Error(`capability ${entry.name} declares the service '${String(service)}' but did not provide it`);
        services[service] = value;
      }
    }
  } catch (err) {
    await closeBuilt();
    throw err;
  }
  return { capabilities: entries.map((_, i) => built.get(i)!), close: closeBuilt };
}
