import type { AppCapabilityFactory } from './app-capability.js';
import { createFilesRoute } from '../protocol/files/files-route.js';
import { UploadStaging } from '../supervisor/workspace/upload-staging.js';
import { workspaceJobs } from '../supervisor/workspace/workspace-jobs.js';
import { openDownload } from '../supervisor/workspace/open-download.js';

/** Workspace Jobs (browse, preview, delete) and the `/files` routes (staging, downloads). */
export const workspaceCapability: AppCapabilityFactory = async (env) => {
  const staging = new UploadStaging(env.workspace, env.config.service.upload_limit_bytes);
  await staging.sweepParts();
  return {
    jobs: workspaceJobs(env.workspace, env.pool),
    routes: [
      createFilesRoute(staging, (path) => openDownload(env.workspace, path), {
        uploaded: (bytes) => env.metrics.uploadBytes.inc(bytes),
        downloaded: (bytes) => env.metrics.downloadBytes.inc(bytes),
      }),
    ],
  };
};
