import { readFileSync } from 'node:fs';
import { parse as parseYaml } from '../../vendor/yaml.js';
import { ConfigFile } from '../../schemas/config.js';
import { resolveWorkspace } from '../../schemas/workspace-path.js';
import { check } from '../../schemas/validator.js';
import { configIssueLines } from './config-messages.js';
import { webhookUrlProblems } from './host-check.js';
import { machineHistoryProblems } from '../../schemas/machine-history.js';
import { slurmRestProblems } from './slurm-rest-config.js';

/** Resolved configuration: the file's sections with defaults filled and paths made absolute. */
export interface Config extends ConfigFile {
  /** Where the configuration came from, for messages. */
  readonly source: string;
}

import { ConfigError } from '../../core/errors.js';

export { ConfigError };

/** Command-line and environment values that win over the file. */
export interface ConfigOverrides {
  host?: string;
  port?: number;
  workspace?: string;
  token?: string | null;
}


/** Parses and validates a configuration document; `source` names it in error messages. */
export function parseConfig(text: string, source: string): Config {
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 }) ?? {};
  } catch (err) {
    throw new ConfigError(`${source}: not valid YAML: ${(err as Error).message}`);
  }
  return validateConfig(raw, source);
}

export function validateConfig(raw: unknown, source: string): Config {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${source}: the configuration must be a mapping with sections ${Object.keys(ConfigFile.properties).join(', ')}`);
  }
  const withService = { service: {}, ...(raw as Record<string, unknown>) };
  const result = check(ConfigFile, withService, { defaults: true });
  if (!result.ok) {
    const lines = configIssueLines(result.issues, ConfigFile, withService);
    throw new ConfigError(`${source}: invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  // What the schema cannot say: cross-field rules, with a message naming the fix.
  const problems = [
    ...webhookUrlProblems(result.value.webhooks, result.value.webhook_hosts),
    ...machineHistoryProblems(result.value.machine.history),
    ...slurmRestProblems(result.value.executor),
  ];
  if (problems.length) throw new ConfigError(`${source}: invalid configuration:\n  ${problems.join('\n  ')}`);
  return { ...result.value, source };
}

/** Loads the file (if any), applies overrides, and resolves the workspace to an absolute path. */
export function loadConfig(file: string | undefined, overrides: ConfigOverrides = {}): Config {
  let config: Config;
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read configuration file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    config = parseConfig(text, file);
  } else {
    config = validateConfig({}, 'built-in defaults');
  }
  const service = { ...config.service };
  if (overrides.host !== undefined) service.host = overrides.host;
  if (overrides.port !== undefined) service.port = overrides.port;
  if (overrides.workspace !== undefined) service.workspace = overrides.workspace;
  if (overrides.token !== undefined) service.token = overrides.token;
  service.workspace = resolveWorkspace(service.workspace);
  const { source, ...sections } = config;
  return validateConfig({ ...sections, service }, source);
}
