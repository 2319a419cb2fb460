import { isObject } from '../../../core/is-object.js';
import type { SlurmRestApi } from './slurm-rest-api.js';
import { V0038 } from './slurm-rest-v0038.js';

/** The versions taskyard speaks, newest first. */
export const API_VERSIONS: readonly SlurmRestApi[] = [V0038];

/**
 * The adapter for the newest version the server's OpenAPI document (`GET /openapi/v3`) offers a
 * submit path for; an Error naming what it offers and what taskyard speaks when none fits.
 */
export function chooseApi(openapi: Record<string, unknown>): SlurmRestApi | Error {
  const paths = isObject(openapi['paths']) ? Object.keys(openapi['paths']) : [];
  const api = API_VERSIONS.find((candidate) => paths.includes(candidate.submitPath));
  if (api) return api;
  const offered = [...new Set(paths.map((path) => /^\/slurm\/(v[\d.]+)\//.exec(path)?.[1]).filter((v) => v !== undefined))];
  const speaks = API_VERSIONS.map((candidate) => candidate.version).join(', ');
  return new Error(`offers the Slurm OpenAPI ${offered.length ? offered.join(', ') : 'versions: none'}; taskyard speaks ${speaks} (load that plugin: slurmrestd -s openapi/${API_VERSIONS[0]!.version})`);
}
