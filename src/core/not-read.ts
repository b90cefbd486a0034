// What a live run began to read and lost: an API read that failed for a reason other than a
// refusal (the API server went away, timed out, answered 410 or 5xx) or a node command that began
// and did not finish. A report with any is partial: what it says holds for what was read only.
import type { Facts } from './model.js';
import { nodeErrorsOf } from './node-access.js';

/** An API read that failed (meta.readErrors); `reason` is the API error's kind. */
export interface ReadError {
  what: string;
  error: string;
  reason?: string;
}

export interface NotRead {
  what: string;
  why: string;
}

/** Refusals are answers (RBAC said no, the object is not there): the steps say them as not observed. */
const ANSWERED = new Set(['forbidden', 'not-found']);

export function readErrorsOf(facts: Facts): ReadError[] {
  const v = facts.meta['readErrors'];
  return Array.isArray(v) ? (v as ReadError[]) : [];
}

/** What was lost mid-run, in the order it was read. */
export function notRead(facts: Facts): NotRead[] {
  return [
    ...readErrorsOf(facts)
      .filter((e) => e.reason !== undefined && !ANSWERED.has(e.reason))
      .map((e) => ({ what: e.what, why: e.error })),
    ...nodeErrorsOf(facts)
      .filter((e) => e.lost)
      .map((e) => ({ what: `${e.command} on node ${e.node}`, why: e.error })),
  ];
}
