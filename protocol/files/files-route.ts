import type { IncomingRequest, ResponseSink } from '../http.js';
import { sendJson } from '../reply.js';
import type { Route } from '../route.js';
import { ok } from '../../schemas/job-response.js';
import { HttpError } from '../../core/errors.js';
import type { FileCopy } from '../../schemas/workspace.js';
import { sendFile, type OpenDownload } from './file-download.js';

/** The staging area behind the routes (the workspace's UploadStaging). */
export interface StagingArea {
  /** Receives the request body and stages it (4xx as HttpError). */
  upload(req: IncomingRequest): Promise<FileCopy>;
  /** Checks that the `path` query names a staged file, removes it, answers the path. */
  removeStaged(path: string | null): Promise<string>;
}

/** Where transferred bytes are counted (the service's metrics). */
export interface TransferCounters {
  uploaded(bytes: number): void;
  downloaded(bytes: number): void;
}

/**
 * `POST /files` (raw body, `x-file-name`, optional `x-file-directory`) answers a FileCopy;
 * `DELETE /files?path=...` removes a staged file. Both answer a JobResponse. `GET`/`HEAD
 * /files?path=...` download any workspace file. The bearer token is checked by the front door
 * before this runs.
 */
export function createFilesRoute(staging: StagingArea, open: OpenDownload, counters: TransferCounters): Route {
  return {
    prefix: '/files',
    async handle(req: IncomingRequest, res: ResponseSink): Promise<void> {
      if (req.path !== '/files' && req.path !== '/files/') throw new HttpError(404, 'Not found');
      if (req.method === 'GET' || req.method === 'HEAD') {
        counters.downloaded(await sendFile(open, req, res));
        return;
      }
      if (req.method === 'POST') {
        try {
          const copy = await staging.upload(req);
          counters.uploaded(copy.size);
          return sendJson(res, 200, ok(copy));
        } catch (err) {
          // A client that went away mid-upload gets no answer; its part file is already gone.
          if (req.signal.aborted) return;
          throw err;
        }
      }
      if (req.method === 'DELETE') {
        const path = await staging.removeStaged(new URLSearchParams(req.query).get('path'));
        return sendJson(res, 200, ok({ path }));
      }
      throw new HttpError(405, 'Method not allowed; use GET, HEAD, POST or DELETE');
    },
  };
}
