// Whether the capture read the objects of a kind: "no Pods", "no Endpoints" mean none exist only
// where it did. The checks (context.ts) and the node analysis (the Endpoints kube-proxy reads) ask.
import type { ClusterView } from '../kube/objects.js';
import type { Facts } from '../model.js';
import { readErrorsOf, type ApiRead } from './not-read.js';

export type CapturedKind = 'Pod' | 'Node' | 'Endpoints';

const RESOURCE: Record<CapturedKind, string> = {
  Pod: 'pods',
  Node: 'nodes',
  Endpoints: 'endpoints',
};

/** "the read of X failed: why" for the first read of the run that failed and `of` accepts. */
export function readFailed(facts: Facts, of: (read: ApiRead) => boolean): string | undefined {
  const failed = readErrorsOf(facts).find((e) => e.read && of(e.read));
  return failed ? `the read of ${failed.what} failed: ${failed.error}` : undefined;
}

/** Why the objects of a kind were not captured (none in the facts at all, or the read of them
 * failed), or undefined when they were. */
export function notCaptured(
  facts: Facts,
  view: Pick<ClusterView, 'services'>,
  kind: CapturedKind,
): string | undefined {
  // a list of them (for Endpoints also the Service's own, by name), not kube-system's add-ons
  const failed = readFailed(
    facts,
    (r) =>
      r.resource === RESOURCE[kind] &&
      (!r.name || kind === 'Endpoints') &&
      !r.addon &&
      r.podIP === undefined,
  );
  if (failed) return failed;
  if (facts.objects.some((o) => o.kind === kind)) return undefined;
  // the endpoints controller writes an Endpoints object for every Service with a selector
  if (kind === 'Endpoints' && !view.services.some((s) => s.selector)) return undefined;
  return `the facts hold no ${kind} ${kind === 'Endpoints' ? 'object ' : ''}at all (objects.json has none)`;
}
