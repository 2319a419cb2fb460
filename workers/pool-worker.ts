import { NOTES_DONE, type PoolKind, type PoolMessage, type PoolNote, type PoolTasks } from './pool-tasks.js';
import { runShell } from './shell.js';

type Handlers = {
  [K in PoolKind]: (input: PoolTasks[K]['input'], aborted: AbortSignal, note: (note: PoolNote<K>) => void) => Promise<PoolTasks[K]['output']>;
};

const handlers: Handlers = {
  echo: async (input) => ({ value: input.value }),
  shell: runShell,
  // Loaded on first use: threads that only run shell commands never pay for Arrow and YAML.
  preview: async (input, aborted) => (await import('./preview/preview.js')).runPreview(input, aborted),
  'csv-rows': async (input, aborted) => (await import('./preview/csv-rows.js')).runCsvRows(input, aborted),
};

/** Piscina entry: dispatches one typed message to its handler. */
export default async function run(message: PoolMessage): Promise<unknown> {
  const controller = new AbortController();
  const port = message.abort;
  port.once('message', () => controller.abort());
  port.unref();
  try {
    const handler = handlers[message.kind] as (input: unknown, aborted: AbortSignal, note: (note: unknown) => void) => Promise<unknown>;
    return await handler(message.input, controller.signal, (note) => port.postMessage(note));
  } finally {
    port.postMessage(NOTES_DONE);
    port.close();
  }
}
