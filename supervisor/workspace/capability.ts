import type { CapabilityFactory } from '../capability.js';
import { createFilesRoute } from './files-route.js';
import { UploadStaging } from './upload-staging.js';
import { workspaceJobs } from './workspace-jobs.js';

/** Workspace Jobs (browse, preview, delete) and the `/files` routes (staging, downloads). */
export const workspaceCapability: CapabilityFactory = async (env) => {
  const staging = new UploadStaging(env.workspace, env.config.service.upload_limit_bytes);
  await staging.sweepStaleParts();
  return {
    jobs: workspaceJobs(env.workspace, env.pool),
    routes: [createFilesRoute(env.workspace, staging, env.metrics)],
  };
};
