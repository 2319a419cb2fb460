import type { JobCatalog, JobResponse } from '../schemas/job-response.js';
import type { StreamEvent } from '../schemas/events.js';

/**
 * Runs calls on another configured service (a target). Transports ask it whether an address is
 * configured (422 otherwise) and hand it the raw arguments; validation happens on the target.
 */
export interface Forwarder {
  /** The configured address matching `address` after normalisation, or undefined. */
  resolve(address: string): string | undefined;
  /** Ordinary call; remote 4xx pass through as HttpError, connection/protocol failures are 502. */
  call(address: string, job: string, args: Record<string, unknown>, signal: AbortSignal): Promise<JobResponse>;
  /** Streams the remote `/events` call event by event, ending with its `result`. */
  stream(address: string, job: string, args: Record<string, unknown>, signal: AbortSignal): AsyncIterable<StreamEvent>;
  catalog(address: string, signal: AbortSignal): Promise<JobCatalog>;
}
