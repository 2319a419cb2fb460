import type { HttpAdapter } from './http.js';
import { nodeAdapter } from './node-adapter.js';
import { uwsAdapter } from './uws-adapter.js';
import { loadNativeUws } from './uws-native.js';

/**
 * Picks the front end: native uWebSockets.js when its binary loads, node:http otherwise (with a
 * warning). `TASKYARD_HTTP_ADAPTER=node|uws` forces one, e.g. to run the tests on both.
 */
export function chooseAdapter(forced = process.env['TASKYARD_HTTP_ADAPTER']): HttpAdapter {
  if (forced === 'node') return nodeAdapter;
  const uws = loadNativeUws();
  if (!(uws instanceof Error)) return uwsAdapter(uws);
  if (forced === 'uws') throw new Error(`TASKYARD_HTTP_ADAPTER=uws but the native uWebSockets.js binary does not load: ${uws.message}`);
  console.warn(`taskyard: native uWebSockets.js does not load here (${uws.message.split('\n')[0]}); using node:http, which is slower`);
  return nodeAdapter;
}
