// Step 4's legacy Endpoints against the EndpointSlices: which of the two kube-proxy routes by
// on each node (its release says: endpoint-source.ts) is the one in effect there.
import { read } from '../../findings/evidence.js';
import type { LegacyEndpoints, Service, ServicePort } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { kubectl, valid, w } from '../../findings/next-command.js';
import { findingOf } from '../check.js';
import type { CheckContext, PortEndpoint } from '../context.js';
import { familyOf } from '../../ipv6.js';
import {
  endpointsOf,
  endpointSourceText,
  SLICE_PROXYING,
  type EndpointSource,
} from '../../dataplane/kube-proxy/endpoint-source.js';

const finding = findingOf('endpoints');

/** Legacy Endpoints (ready addresses) against the slices' ready endpoints. */
export function legacyAgreement(ctx: CheckContext, svc: Service, all: PortEndpoint[]): Finding[] {
  if (endpointsOf(ctx.view, svc).length === 0 || ctx.slices().length === 0) return [];
  const fromLegacy = new Set(legacyReady(ctx, svc));
  // the legacy object holds one family (the Service's first): compare that family only
  const families = new Set([...fromLegacy].map(familyOf));
  if (families.size === 0) families.add(familyOf(svc.clusterIP ?? '') ?? 'IPv4');
  const fromSlices = new Set(
    all.filter((e) => e.ready && families.has(familyOf(e.ip))).map((e) => e.ip),
  );
  const onlyLegacy = [...fromLegacy].filter((ip) => !fromSlices.has(ip));
  const onlySlices = [...fromSlices].filter((ip) => !fromLegacy.has(ip));
  if (onlyLegacy.length === 0 && onlySlices.length === 0) return [];
  return [
    finding(
      'endpoints-disagree',
      'warn',
      'the legacy Endpoints and the EndpointSlices list different ready addresses',
      {
        explanation: `${proxiesFrom(ctx)} One of the controllers is behind or the objects were edited by hand.`,
        evidence: [
          ...onlyLegacy.map((ip) => `only in Endpoints ${svc.name}: ${ip}`),
          ...onlySlices.map((ip) => `only in the EndpointSlices: ${ip}`),
        ].map((l) => read(l)),
        // both by name: Endpoints objects do not carry the slices' service-name label
        next: kubectl(
          svc.namespace,
          'get',
          w`endpoints/${valid.name(svc.name)}`,
          ...ctx.slices().map((sl) => w`endpointslice/${valid.name(sl.name)}`),
          '-o',
          'wide',
        ),
      },
    ),
  ];
}

/** Which of the two objects kube-proxy routes by, on each node by its release. */
function proxiesFrom(ctx: CheckContext): string {
  const byNode = sourcesByNode(ctx);
  const legacy = byNode.filter(([, s]) => s.reads === 'Endpoints');
  const said = endpointSourceText(byNode);
  if (legacy.length === 0)
    return `kube-proxy 1.${SLICE_PROXYING} and later reads the EndpointSlices, not the legacy Endpoints object, so a tool that reads Endpoints (an older ingress controller, a script) sees a different set of Pods.${said ? ` ${said}` : ''}`;
  return `${said} There connections to the Service go to the Endpoints' addresses, and a tool that reads the EndpointSlices sees a different set of Pods.`;
}

/** Where every node's kube-proxy routes by the legacy Endpoints and they list all of `ips` ready:
 * why those addresses still get the Service's traffic, in words. */
export function routedByEndpoints(
  ctx: CheckContext,
  svc: Service,
  ips: string[],
): string | undefined {
  const byNode = sourcesByNode(ctx);
  if (byNode.length === 0 || byNode.some(([, s]) => s.reads !== 'Endpoints')) return undefined;
  const ready = new Set(legacyReady(ctx, svc));
  if (ips.length === 0 || !ips.every((ip) => ready.has(ip))) return undefined;
  return `${endpointSourceText(byNode)} The Endpoints ${svc.name} list ${ips.join(', ')} ready, so kube-proxy still sends the Service's traffic there; what reads the EndpointSlices does not see ${ips.length === 1 ? 'it' : 'them'}.`;
}

/** The ready addresses of the Service's legacy Endpoints for its port (each port without one),
 * joined by port name and protocol as kube-proxy and the endpoints controller join them. */
export function legacyReady(ctx: CheckContext, svc: Service, port?: ServicePort): string[] {
  const ports = port ? [port] : svc.ports;
  const serves = (s: LegacyEndpoints['subsets'][number]) =>
    s.ports.some((p) => ports.some((x) => x.name === p.name && x.protocol === p.protocol));
  const ips = endpointsOf(ctx.view, svc).flatMap((e) =>
    e.subsets.filter(serves).flatMap((s) => s.addresses.map((a) => a.ip)),
  );
  return [...new Set(ips)];
}

/** What each node's kube-proxy takes the endpoints from (endpoint-source.ts). */
const sourcesByNode = (ctx: CheckContext): [string, EndpointSource][] =>
  ctx.nodeNames().map((n) => [n, ctx.analysis.node(n).expected(ctx.scope).endpointsFrom]);
