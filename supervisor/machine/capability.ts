import { Type } from '@sinclair/typebox';
import { ok } from '../../schemas/job-response.js';
import { PACKAGE_VERSION } from '../build-info.js';
import type { CapabilityFactory } from '../capability.js';
import { defineJob } from '../job.js';

const NoArguments = Type.Object({}, { additionalProperties: false });

/** Machine Jobs: version, list_machines, machine_status, shell. */
export const machineCapability: CapabilityFactory = () => ({
  jobs: [
    defineJob({
      name: 'version',
      description: 'Returns the installed taskyard version (also in metadata.version).',
      input: NoArguments,
      run: async () => ok(PACKAGE_VERSION, { version: PACKAGE_VERSION }),
    }),
  ],
});
