import { readFileSync } from 'node:fs';

/**
 * The line a test file carries when its behaviour depends on the HTTP front end (kept in the
 * compiled JS). The suite runs such a file on every front end, over real sockets; every other file
 * runs once, and its Job calls go through the routes in process, where a socket would add nothing.
 */
export const FRONT_END_MARKER = '// Runs on every HTTP front end.';

/** Whether a compiled test file carries the marker. */
export function testsFrontEnd(file: string): boolean {
  try {
    return readFileSync(file, 'utf8').includes(FRONT_END_MARKER);
  } catch {
    return false;
  }
}
