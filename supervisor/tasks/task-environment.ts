/** Never handed to Task code or any other child: the service's own credentials. */
const PRIVATE_VARIABLES = ['TASKYARD_TOKEN'] as const;

/** The environment of the service's children: its own, plus `extra`, less its secrets. */
export function taskEnvironment(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of PRIVATE_VARIABLES) delete env[name];
  return env;
}
