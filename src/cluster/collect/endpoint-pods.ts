// The Pods a Service's endpoints are: those its EndpointSlices and Endpoints name, and the
// addresses they list without naming a Pod, which only a lookup by address can tell.
import type { KubeObject } from '../../core/model.js';
import { canonicalAddress, familyOf } from '../../core/ipv6.js';

/** The Pods a Service's EndpointSlices and Endpoints point at (targetRef kind Pod). */
export function endpointPodRefs(
  namespace: string,
  slices: KubeObject[],
  endpoints: KubeObject | undefined,
): { namespace: string; name: string }[] {
  type Ref = { kind?: string; name?: string; namespace?: string };
  const refs: Ref[] = [];
  for (const s of slices)
    for (const e of (s['endpoints'] as { targetRef?: Ref }[] | undefined) ?? [])
      if (e.targetRef) refs.push(e.targetRef);
  for (const subset of (endpoints?.['subsets'] as
    Record<string, { targetRef?: Ref }[] | undefined>[] | undefined) ?? []) {
    for (const a of [...(subset['addresses'] ?? []), ...(subset['notReadyAddresses'] ?? [])])
      if (a.targetRef) refs.push(a.targetRef);
  }
  const seen = new Map<string, { namespace: string; name: string }>();
  for (const r of refs) {
    if ((r.kind ?? 'Pod') !== 'Pod' || !r.name) continue;
    const ref = { namespace: r.namespace || namespace, name: r.name };
    seen.set(`${ref.namespace}/${ref.name}`, ref);
  }
  return [...seen.values()];
}

/** Past this many addresses that name no Pod, the rest are not looked up (said as not known). */
const POD_IP_LOOKUPS = 16;

/** The addresses a Service's EndpointSlices and Endpoints list without naming a Pod (a hand-made
 * slice, a selector-less Service): which Pod, if any, has them is looked up by address. */
export function addressesNamingNoPod(
  slices: KubeObject[],
  endpoints: KubeObject | undefined,
): string[] {
  type Address = {
    addresses?: string[];
    ip?: string;
    targetRef?: { kind?: string; name?: string };
  };
  const namesNoPod = (a: Address) => !a.targetRef?.name || (a.targetRef.kind ?? 'Pod') !== 'Pod';
  const out = new Set<string>();
  for (const s of slices)
    for (const e of (s['endpoints'] as Address[] | undefined) ?? [])
      if (namesNoPod(e))
        for (const ip of e.addresses ?? []) if (familyOf(ip)) out.add(canonicalAddress(ip));
  for (const subset of (endpoints?.['subsets'] as
    Record<string, Address[] | undefined>[] | undefined) ?? [])
    for (const a of [...(subset['addresses'] ?? []), ...(subset['notReadyAddresses'] ?? [])])
      if (namesNoPod(a) && a.ip && familyOf(a.ip)) out.add(canonicalAddress(a.ip));
  return [...out].slice(0, POD_IP_LOOKUPS);
}
