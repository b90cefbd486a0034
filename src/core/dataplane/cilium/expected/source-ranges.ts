// A Service's loadBalancerSourceRanges as Cilium's agent reads them: 1.17's control plane trims
// each (pkg/k8s/service.go ParseService); from 1.18 each is parsed as written and one that does
// not parse is ignored (pkg/loadbalancer/reflectors/conversions.go convertService). The API server
// lets such ranges through (padded with spaces, or with a leading zero): each is said, with why.
import { read } from '../../../findings/evidence.js';
import { familyOf } from '../../../ipv6.js';
import type { Service } from '../../../kube/objects.js';
import type { Evidence } from '../../../model.js';
import type { ExpectedFrontend } from './expected.js';
import { SETTING_NOT_KNOWN } from '../agent/refused.js';

/** A range of the Service the agent ignores, and why netip.ParsePrefix rejects it. */
export interface IgnoredRange {
  range: string;
  why: string;
}

/** Why Go's netip.ParsePrefix rejects `text` (no spaces, a prefix length without a leading zero,
 * IPv4 octets without one, no IPv6 zone), or undefined where it reads it. */
export function prefixRejected(text: string): string | undefined {
  if (text !== text.trim()) return 'spaces around it';
  const slash = text.lastIndexOf('/');
  if (slash < 0) return 'no prefix length';
  const address = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  if (address.includes('%')) return 'an IPv6 zone';
  const family = address.includes('/') ? undefined : familyOf(address);
  if (!family) return 'not an address';
  if (family === 'IPv4' && /(^|\.)0\d/.test(address)) return 'an octet with a leading zero';
  if (/^0\d/.test(bits)) return 'a prefix length with a leading zero';
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 'IPv4' ? 32 : 128))
    return 'not a prefix length of its family';
  return undefined;
}

/** The Service's ranges the agent checks sources against, and those it ignores. */
export function sourceRangesOf(
  svc: Service,
  trimmed: boolean | undefined,
): { ranges: string[]; ignored: IgnoredRange[] } {
  if (trimmed) return { ranges: svc.loadBalancerSourceRanges, ignored: [] };
  const spec = svc.raw['spec'] as { loadBalancerSourceRanges?: unknown[] } | undefined;
  const ranges: string[] = [];
  const ignored: IgnoredRange[] = [];
  for (const range of spec?.loadBalancerSourceRanges ?? []) {
    if (typeof range !== 'string') continue;
    const why = prefixRejected(range);
    if (why) ignored.push({ range, why });
    else ranges.push(range);
  }
  return { ranges, ignored };
}

/** What the agent makes of a Service's ranges it ignores: a title naming them (quoted, their spaces
 * seen), one line with why each and what its frontends check instead, and whether that lets every
 * client in. */
export interface IgnoredRangesSaid {
  service: string;
  title: string;
  text: string;
  open: boolean;
}

/** Each Service of `frontends` whose ranges the agent ignores, said once; `checked`: the agent's
 * source-range check is on (agent/agent.ts sourceRangeCheck), else no frontend checks a source;
 * undefined where that is not known (comparable.ts sourceRangeCheckOf). */
export function ignoredRangesOf(
  frontends: readonly Pick<ExpectedFrontend, 'service' | 'sourceRanges' | 'ignoredRanges'>[],
  checked: boolean | undefined,
): IgnoredRangesSaid[] {
  const said = new Map<string, IgnoredRangesSaid>();
  for (const f of frontends) {
    if (!f.ignoredRanges || said.has(f.service)) continue;
    const quoted = f.ignoredRanges.map((r) => JSON.stringify(r.range));
    const each = f.ignoredRanges.map((r, i) => `${quoted[i]} (${r.why})`).join(', ');
    const ranges = checked === false ? [] : (f.sourceRanges ?? []);
    const instead =
      checked === false
        ? "no source is checked (the agent's source-range check is off: enable-svc-source-range-check false, or NodePort off), so every client is let in"
        : ranges.length === 0
          ? 'its frontends check no source: every client is let in'
          : checked
            ? `its frontends check the source against ${ranges.join(', ')} only`
            : `its frontends check the source against ${ranges.join(', ')} only where its source-range check is on, which is ${SETTING_NOT_KNOWN}; where off, every client is let in`;
    said.set(f.service, {
      service: f.service,
      title: `loadBalancerSourceRanges ${quoted.join(', ')} ignored by Cilium's agent`,
      text: `Cilium's agent ignores ${each} of the loadBalancerSourceRanges of ${f.service}: it parses each as written (netip.ParsePrefix), so ${instead}`,
      open: ranges.length === 0,
    });
  }
  return [...said.values()];
}

/** The Service's ranges as the API holds them, the evidence of what the agent ignores: their
 * spaces are what it reads. */
export function rangesRead(svc: Service): Evidence {
  const written = (svc.raw['spec'] as { loadBalancerSourceRanges?: unknown } | undefined)
    ?.loadBalancerSourceRanges;
  return read(
    `spec.loadBalancerSourceRanges: ${JSON.stringify(written)}`,
    `Service ${svc.namespace}/${svc.name}`,
  );
}
