import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * One full garbage collection, now. The start-up scan of a long history leaves tens of MB of
 * garbage that V8's memory reducer gives back only after a long idle spell: at 300,000 records the
 * idle service stayed at 247-279 MB RSS for 20 s and more, and at 220 MB right after one
 * collection. Node has no collector API without `--expose-gc`; that flag, set at run time, puts
 * `gc` into contexts made afterwards, so it is taken from a new one.
 */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
