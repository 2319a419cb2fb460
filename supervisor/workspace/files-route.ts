import type { IncomingRequest, ResponseSink } from '../../protocol/http.js';
import { sendJson } from '../../protocol/reply.js';
import type { Route } from '../../protocol/route.js';
import { ok } from '../../schemas/job-response.js';
import { sendFile } from '../downloads/file-download.js';
import { HttpError } from '../errors.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { stagedFilePath } from './staged-path.js';
import type { UploadStaging } from './upload-staging.js';

/**
 * `POST /files` (raw body, `x-file-name`, optional `x-file-directory`) answers a FileCopy;
 * `DELETE /files?path=...` removes a staged file. Both answer a JobResponse. `GET`/`HEAD
 * /files?path=...` download any workspace file. The bearer token is checked by the front door
 * before this runs.
 */
export function createFilesRoute(root: string, staging: UploadStaging, metrics: ServiceMetrics): Route {
  return {
    prefix: '/files',
    async handle(req: IncomingRequest, res: ResponseSink): Promise<void> {
      if (req.path !== '/files' && req.path !== '/files/') throw new HttpError(404, 'Not found');
      if (req.method === 'GET' || req.method === 'HEAD') {
        metrics.downloadBytes.inc(await sendFile(root, req, res));
        return;
      }
      if (req.method === 'POST') {
        try {
          const copy = await staging.upload(req);
          metrics.uploadBytes.inc(copy.size);
          return sendJson(res, 200, ok(copy));
        } catch (err) {
          // A client that went away mid-upload gets no answer; its part file is already gone.
          if (req.signal.aborted) return;
          throw err;
        }
      }
      if (req.method === 'DELETE') {
        const path = stagedFilePath(new URLSearchParams(req.query).get('path'));
        await staging.remove(path);
        return sendJson(res, 200, ok({ path }));
      }
      throw new HttpError(405, 'Method not allowed; use GET, HEAD, POST or DELETE');
    },
  };
}
