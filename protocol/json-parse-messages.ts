import type { ValidationIssue } from '../schemas/validator.js';

/** A body for the parse thread: its bytes, moved (not copied) when they own their memory. */
export interface ParseRequest {
  readonly id: number;
  readonly bytes: Uint8Array;
}

/** The parsed value, or the 4xx the body earned (as `parseJson` throws it). */
export type ParseReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly status: number; readonly detail: string | ValidationIssue[] };
