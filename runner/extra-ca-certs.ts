/**
 * NODE_EXTRA_CA_CERTS for task runners, loaded when first needed instead of at process start.
 *
 * Node 20 reads and parses that file (plus its own root store) while it boots: about 40 ms of CPU
 * per process for a system-sized bundle, paid by every Task start whether or not the Task ever
 * opens a TLS connection, and the largest single cost of a Task start on machines that set it. So
 * the launcher hands the path over under another name; the runner puts it back into
 * `process.env` (the Task's own subprocesses see the variable as usual) and adds the certificates
 * to every TLS context made without an explicit `ca`, which is what Node does with them. Like
 * Node, an unreadable file is a warning, not a failure.
 */
import { readFileSync } from 'node:fs';
import type { SecureContext, SecureContextOptions } from 'node:tls';
import { importModule } from './import-module.js';

const NODE_VARIABLE = 'NODE_EXTRA_CA_CERTS';
const HANDOVER_VARIABLE = 'TASKYARD_EXTRA_CA_CERTS';

/** The options that shape a secure context (Node's configureSecureContext): any of them set means a context of its own. */
const CONTEXT_OPTIONS = [
  'ca', 'cert', 'key', 'pfx', 'passphrase', 'ciphers', 'ecdhCurve', 'dhparam', 'crl', 'sigalgs', 'clientCertEngine',
  'privateKeyEngine', 'privateKeyIdentifier', 'ticketKeys', 'sessionTimeout', 'sessionIdContext', 'secureOptions',
  'secureProtocol', 'minVersion', 'maxVersion', 'honorCipherOrder', 'allowPartialTrustChain',
] as const;

/** The base environment of task runners: NODE_EXTRA_CA_CERTS moved to the handover variable. */
export function deferExtraCaCerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = env[NODE_VARIABLE];
  if (!file) return env;
  const deferred: NodeJS.ProcessEnv = { ...env, [HANDOVER_VARIABLE]: file };
  delete deferred[NODE_VARIABLE];
  return deferred;
}

/** The native context inside a SecureContext (not in Node's typings, stable since Node 0.x). */
interface NativeContext {
  addCACert?(pem: Buffer): void;
}

/**
 * In the runner, before Task code loads: restores NODE_EXTRA_CA_CERTS and, with `tls`, makes the
 * default TLS contexts trust those certificates. Loads `node:tls` only when there is something to
 * restore.
 */
export async function restoreExtraCaCerts({ tls: forTls }: { tls: boolean }): Promise<void> {
  const file = process.env[HANDOVER_VARIABLE];
  delete process.env[HANDOVER_VARIABLE];
  if (!file) return;
  process.env[NODE_VARIABLE] = file;
  if (!forTls) return;
  // getBuiltinModule (Node >= 20.16) spares the ES module loader a dynamic import would start (~2.5 ms).
  const tls = process.getBuiltinModule?.('node:tls') ?? (await importModule<{ default: typeof import('node:tls') }>('node:tls')).default;
  const original = tls.createSecureContext;
  let pem: Buffer | null | undefined;
  const extraCerts = (): Buffer | null => {
    if (pem !== undefined) return pem;
    try {
      pem = readFileSync(file);
    } catch (err) {
      pem = null;
      process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(err as Error).message}`);
    }
    return pem;
  };
  // https, fetch and http2 all reach this function through the module object, so replacing it here
  // covers them. Contexts made from default options are all alike: one is made and shared.
  let shared: SecureContext | undefined;
  tls.createSecureContext = function createSecureContext(options?: SecureContextOptions): SecureContext {
    const opts = (options ?? {}) as Record<string, unknown>;
    if (opts['ca']) return original(options);
    const plain = CONTEXT_OPTIONS.every((name) => opts[name] === undefined);
    if (plain && shared) return shared;
    const certs = extraCerts();
    if (!certs) return original(options);
    let context = original(options);
    const native = (context as SecureContext & { context?: NativeContext }).context;
    if (typeof native?.addCACert === 'function') native.addCACert(certs);
    else context = original({ ...options, ca: [...tls.rootCertificates, certs.toString('latin1')] });
    if (plain) shared = context;
    return context;
  };
}
