import type { JobCatalog, JobResponse } from '../schemas/job-response.js';
import type { StreamEvent } from '../schemas/events.js';

/** A forwarded JobResponse: parsed, or (when large) its JSON text streamed as it arrives. */
export type ForwardedAnswer = JobResponse | { stream: AsyncIterable<Uint8Array> };

/**
 * Runs calls on another configured service (a target). Transports ask it whether an address is
 * configured (422 otherwise) and hand it the raw arguments; validation happens on the target.
 */
export interface Forwarder {
  /** The configured address matching `address` after normalisation, or undefined. */
  resolve(address: string): string | undefined;
  /** Ordinary call; remote 4xx pass through as HttpError, connection/protocol failures are 502. */
  call(address: string, job: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ForwardedAnswer>;
  /**
   * Opens the remote `/events` call. Resolves once the target answered with an event stream, so
   * a remote 4xx (or a 502) is thrown before the caller commits to its own SSE response; the
   * events then pass through one by one, ending with the target's `result`. Leaving the loop
   * early (or aborting `signal`) closes the upstream request.
   */
  openStream(address: string, job: string, args: Record<string, unknown>, signal: AbortSignal): Promise<AsyncIterable<StreamEvent>>;
  catalog(address: string, signal: AbortSignal): Promise<JobCatalog>;
}
