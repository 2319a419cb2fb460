import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/**
 * Where the kernel keeps this process's initial arguments and environment: `/proc/<pid>/cmdline`
 * and `/proc/<pid>/environ` are read from these bytes, live, by anyone running as the same user.
 * Fields 48-51 of `/proc/self/stat` (proc(5): arg_start, arg_end, env_start, env_end).
 */
function startAreas(): { args: number; env: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // The fields after `(comm)`, which may hold spaces; the first of them is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { args: Number(fields[48 - 3]), env: Number(fields[50 - 3]) };
}

/**
 * Where each `entries` item that carries `secret` has it, by byte offset in the NUL-separated
 * `area`: an entry that is the secret (`--token T`), or `NAME=` + the secret (`--token=T`,
 * `TASKYARD_TOKEN=T`) for one of `prefixes`.
 */
function secretSpans(area: Buffer, secret: string, prefixes: readonly string[]): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let start = 0;
  while (start < area.length) {
    let end = area.indexOf(0, start);
    if (end < 0) end = area.length;
    const entry = area.toString('utf8', start, end);
    const prefix = entry === secret ? '' : prefixes.find((p) => entry === p + secret);
    if (prefix !== undefined) spans.push([start + Buffer.byteLength(prefix), end]);
    start = end + 1;
  }
  return spans;
}

/**
 * Overwrites `secret` with `*` where this process's command line (`--token T`, `--token=T`) and
 * initial environment (`TASKYARD_TOKEN=T`) hold it, through `/proc/self/mem` (Node keeps its own
 * copies of both, so nothing reads these bytes again; Node 20 has no way to exec itself anew).
 * Afterwards `ps`, `/proc/<pid>/cmdline` and `/proc/<pid>/environ` show stars. Answers false when
 * the kernel refused (then the caller says so): it is no wall against code running as the same
 * user, which can read the service's memory anyway, only against the token being found lying there.
 */
export function hideTokenFromProc(secret: string): boolean {
  if (secret === '') return true;
  try {
    const areas = startAreas();
    const fd = openSync('/proc/self/mem', 'r+');
    try {
      for (const [file, base, prefixes] of [
        ['/proc/self/cmdline', areas.args, ['--token=']],
        ['/proc/self/environ', areas.env, ['TASKYARD_TOKEN=']],
      ] as const) {
        for (const [from, to] of secretSpans(readFileSync(file), secret, prefixes)) {
          writeSync(fd, Buffer.alloc(to - from, '*'), 0, to - from, base + from);
        }
      }
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}
