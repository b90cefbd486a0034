// Evidence says where it came from: observed on a node (which node, which command's output, which
// line), read from the API (which object), computed by kdebug (the expected rules or records, a
// packet walked over observed rules), or not observed (why). Only observed and read evidence can
// pass or fail a finding; computed evidence explains; not-observed evidence says what is missing.
import type { StateLine } from '../dataplane/dataplane.js';
import type { Evidence, Status } from '../model.js';

/** Seen on a node: a rule, a probe's answer, a conntrack entry. */
export const seen = (
  text: string,
  at: { node?: string; source?: string; line?: number } = {},
): Evidence => ({ kind: 'observed', text, ...at });

/** Read from the API: an object's field, a list's count. */
export const read = (text: string, object?: string): Evidence => ({
  kind: 'read',
  text,
  ...(object ? { object } : {}),
});

/** Computed by kdebug: what kube-proxy should write, the records DNS should answer, a walk. */
export const computed = (text: string, label: 'expected' | 'walked' = 'expected'): Evidence => ({
  kind: 'computed',
  text,
  label,
});

/** Not observed: what kdebug could not see, and why. */
export const unseen = (text: string, node?: string): Evidence => ({
  kind: 'not-observed',
  text,
  ...(node ? { node } : {}),
});

/** Evidence a verdict may rest on: seen on a node or read from the API. */
export const isObserved = (e: Evidence) => e.kind === 'observed' || e.kind === 'read';

/** The status evidence allows: a verdict (pass, fail, warn), an explanation's too, needs evidence
 * observed on a node or read from the API; without any it is a skip, whatever was meant. */
export function judged(status: Status, evidence: readonly Evidence[]): Status {
  const verdict = status === 'pass' || status === 'fail' || status === 'warn';
  return verdict && !evidence.some(isObserved) ? 'skip' : status;
}

/** What keeps a pass from passing: a part not observed, or a node it speaks for with nothing
 * observed there (a pass for every node needs each node's own evidence). */
export function unprovenPass(
  evidence: readonly Evidence[],
  nodes: readonly string[],
): string | undefined {
  const unseenPart = evidence.find((e) => e.kind === 'not-observed');
  if (unseenPart) return unseenPart.text;
  const bare = nodes.find((n) => !evidence.some((e) => e.kind === 'observed' && e.node === n));
  return bare === undefined ? undefined : `nothing observed on ${bare}`;
}

/** A drift's lines read as a difference, without colour too. */
const DIFF_MARK = { missing: '-', unexpected: '+', same: ' ' } as const;

/** A line as a person reads it: a drift's lines as a difference; computed and unobserved
 * evidence say so first. */
export function evidenceText(e: Evidence): string {
  // a computed line beside the node's observed ones says it is kdebug's: "- expected: -A ..."
  if (e.diff)
    return `${DIFF_MARK[e.diff]} ${e.kind === 'computed' ? `${e.label ?? 'expected'}: ` : ''}${e.text}`;
  if (e.kind === 'computed') return `${e.label ?? 'expected'}: ${e.text}`;
  if (e.kind === 'not-observed') return `not observed: ${e.text}`;
  return e.text;
}

/** Evidence lines a report shows of one finding before "and N more" (JSON keeps every one). */
const SHOWN = 12;

/** The evidence a screen shows: all of a short list; of a long one the first lines, and how many
 * more there are, so that no finding grows with the cluster. */
export function shownEvidence(evidence: readonly Evidence[]): { shown: Evidence[]; more: number } {
  if (evidence.length <= SHOWN) return { shown: [...evidence], more: 0 };
  return { shown: evidence.slice(0, SHOWN - 1), more: evidence.length - (SHOWN - 1) };
}

export const moreText = (more: number) => `... and ${more} more (-o json lists every one)`;

/** A line of a node's state (a rule, a table element, a virtual server) as observed evidence. */
export const stateSeen = (node: string, l: StateLine): Evidence =>
  seen(l.text, {
    node,
    ...(l.source ? { source: l.source } : {}),
    ...(l.line !== undefined ? { line: l.line } : {}),
  });
