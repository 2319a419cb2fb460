import { pathToFileURL } from 'node:url';

/**
 * Runs several scenarios of the official MCP conformance runner (its CLI, unchanged) in this one
 * process: `node --import node20-fs-shim.js conformance-scenarios.js <cli> <url> <scenario>…`.
 * A process per scenario spent most of its CPU starting Node and loading the runner's
 * dependencies; here they load once, and the CLI module is evaluated afresh per scenario (a query
 * in its URL), with the arguments it would get on the command line. The CLI ends a scenario with
 * process.exit(code): that code is taken as the scenario's. After each scenario a line
 * `=== <scenario> exit <code>` closes its output.
 */
const [cli, url, ...scenarios] = process.argv.slice(2) as [string, string, ...string[]];
const exit = process.exit.bind(process);
const argv0 = process.argv[0]!;

for (const scenario of scenarios) {
  const code = await new Promise<number>((resolve) => {
    process.exit = ((c?: number | string | null) => resolve(Number(c ?? 0))) as typeof process.exit;
    process.argv = [argv0, cli, 'server', '--url', url, '--scenario', scenario];
    import(`${pathToFileURL(cli).href}?scenario=${encodeURIComponent(scenario)}`).catch((err: Error) => {
      console.log(`${scenario}: ${err.stack ?? err.message}`);
      resolve(1);
    });
  });
  console.log(`=== ${scenario} exit ${code}`);
}
exit(0);
