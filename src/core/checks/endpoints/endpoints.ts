// Step 4: the EndpointSlices: each endpoint's ready / serving / terminating state and the Pod and
// node behind it; why a Pod is not ready; the legacy Endpoints agreeing with the slices.
import { read, unseen } from '../../findings/evidence.js';
import type { Pod, Service } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { kubectl, valid } from '../../findings/next-command.js';
import {
  addressHolder,
  type Check,
  consequence,
  count,
  endpointSlicesOf,
  findingOf,
  list,
  pending,
  podsOf,
  podsWithAddress,
  serviceRef,
} from '../check.js';
import type { CheckContext, PortEndpoint } from '../context.js';
import { podReady, whyNotReady } from '../pod-health.js';
import { endpointLine, notPodsAddress, notReady } from './not-ready.js';
import { familyOf, hostPort } from '../../ipv6.js';
import { legacyAgreement, legacyReady, routedByEndpoints } from './endpoints-legacy.js';
import { inDoubt, readyInSliceOnly, readyOnDownNodes } from './doubted.js';

const finding = findingOf('endpoints');

/** Selected, ready Pods no EndpointSlice lists: with no endpoint ready, the root of "no ready
 * endpoints" (a slice deleted and not re-created, a controller behind). */
function missingPods(
  ctx: CheckContext,
  svc: Service,
  all: PortEndpoint[],
  served: boolean,
): Finding | undefined {
  // a Pod a slice lists under a port no Service port is named for is listed: the Ports step
  // says the names differ (kube-proxy and the controller join ports by name)
  const listed = new Set([
    ...all.map((e) => e.ip),
    ...ctx.slices().flatMap((s) => s.endpoints.flatMap((e) => e.addresses)),
  ]);
  const missing = ctx
    .selectedPods()
    .filter((p) => podReady(p) && p.podIP && !listed.has(p.podIP) && !p.deleting);
  if (missing.length === 0) return undefined;
  const one = missing.length === 1;
  const none = ctx.slices().length === 0;
  // kube-proxy before 1.19 routes by the legacy Endpoints: there they may still be endpoints
  const routed = routedByEndpoints(
    ctx,
    svc,
    missing.map((p) => p.podIP!),
  );
  return finding(
    'pod-missing-from-endpoints',
    served || routed ? 'warn' : 'fail',
    none
      ? `${count(missing.length, 'ready Pod')} selected, but the Service has no EndpointSlice`
      : `${count(missing.length, 'ready Pod')} selected but not in the EndpointSlices`,
    {
      explanation: `The selector matches ${missing.map((p) => p.name).join(', ')} and ${one ? 'it is' : 'they are'} ready, but ${
        none
          ? `no EndpointSlice of ${svc.namespace}/${svc.name} exists: it was deleted and the EndpointSlice controller (kube-controller-manager) has not re-created it, or that controller is behind or not running.`
          : `no EndpointSlice lists ${one ? 'its' : 'their'} IP. Either the endpoint controller is behind (kube-controller-manager), or a named targetPort cannot be resolved on ${one ? 'that Pod' : 'those Pods'}.`
      }${routed ? ` ${routed}` : served ? '' : ' kube-proxy (1.19 and later) and CoreDNS take the endpoints from the EndpointSlices only: to them the Service has none.'}`,
      evidence: [
        ...missing.map((p: Pod) =>
          read(
            `Pod ${p.name}: ${p.podIP} ${p.nodeName ? `on ${p.nodeName}` : '(not scheduled yet)'}, Ready`,
          ),
        ),
        ...(none
          ? [read(`no EndpointSlice has label kubernetes.io/service-name=${svc.name}`)]
          : []),
      ],
      next: kubectl('kube-system', 'logs', '-l', 'component=kube-controller-manager', '--tail=50'),
    },
  );
}

/** Endpoints that name no Pod, or a Pod that is gone, and Pods restarting. */
function mismatches(ctx: CheckContext, svc: Service, all: PortEndpoint[]): Finding[] {
  const out: Finding[] = [];
  const unnamed = [...new Set(all.filter((e) => !e.podName).map((e) => e.ip))];
  const holders = unnamed.map((ip) => ({ ip, holder: addressHolder(ctx, ip) }));
  const outside = holders.filter((h) => h.holder === 'none').map((h) => h.ip);
  const unknown = holders.flatMap((h) =>
    typeof h.holder === 'object' ? [{ ip: h.ip, why: h.holder.unknown }] : [],
  );
  if (unknown.length > 0)
    out.push(
      finding(
        'endpoint-holder-not-observed',
        'skip',
        `${list(unknown.map((u) => u.ip))}: no Pod named, and whether one holds ${unknown.length === 1 ? 'it' : 'them'} is not known`,
        {
          explanation: `The EndpointSlices list ${list(unknown.map((u) => u.ip))} without naming a Pod (a hand-made slice, or a Service without a selector). kdebug reads only the Pods the Service names, so whether ${unknown.length === 1 ? 'that address belongs' : 'those addresses belong'} to another Pod or to nothing at all was not seen; nothing is said about ${unknown.length === 1 ? 'it' : 'them'}.`,
          evidence: unknown.map((u) => unseen(`${u.ip}: ${u.why}`)),
          next: podsWithAddress(unknown[0]!.ip),
        },
      ),
    );
  if (outside.length > 0)
    out.push(
      finding(
        'endpoint-not-a-pod',
        'pass',
        `${list(outside)} ${outside.length === 1 ? 'is' : 'are'} no Pod's address`,
        {
          explanation: `The EndpointSlices list ${list(outside)}, which no Pod and no node has: an address written by hand (a Service without a selector, pointing outside the cluster's Pods). kube-proxy sends the Service's traffic there all the same; whether anything answers is up to whatever holds that address.`,
          evidence: [
            ...all
              .filter((e) => outside.includes(e.ip))
              .map((e) => read(`EndpointSlice ${e.slice}: ${endpointLine(e)}`)),
            ...outside.map((ip) =>
              read(
                // the capture listed every Pod, or looked this address up
                ctx.facts.meta['everyPodRead'] === true
                  ? `every Pod of the cluster, listed: none has ${ip}`
                  : `Pods with address ${ip} (status.podIP), in every namespace: none`,
                'Pods',
              ),
            ),
          ],
          info: true,
        },
      ),
    );
  // a targetRef to a Pod that does not have the address: the address is what kube-proxy uses
  const misnamed = all.filter(notPodsAddress);
  for (const e of misnamed) {
    const pod = e.pod!;
    const holder = addressHolder(ctx, e.ip);
    const where =
      holder === 'held'
        ? 'another Pod or a node has that address'
        : holder === 'none'
          ? 'no Pod or node has that address'
          : `whether anything holds that address is not known (${holder.unknown})`;
    out.push(
      finding(
        'endpoint-not-a-pod',
        'warn',
        `${e.ip} is not the address of Pod ${pod.name}, the Pod its endpoint names`,
        {
          explanation: `EndpointSlice ${e.slice} lists ${e.ip} for Pod ${pod.name}, whose IP is ${list(pod.podIPs)}: the slice was written for an earlier address of that Pod, or by hand. What proxies from the EndpointSlices (kube-proxy 1.19 and later) sends this endpoint's share of the traffic to ${e.ip}, and ${where}; ${pod.name} gets none of it through this endpoint.`,
          evidence: [
            read(`EndpointSlice ${e.slice}: ${endpointLine(e)}`),
            read(
              `Pod ${pod.name}: status.podIPs ${list(pod.podIPs)}`,
              `Pod ${pod.namespace}/${pod.name}`,
            ),
          ],
          next: endpointSlicesOf(svc, 'yaml'),
          ...(e.nodeName ? { node: e.nodeName } : {}),
        },
      ),
    );
  }
  const gone = all.filter((e) => e.podName && !e.pod && ctx.view.pods.length > 0);
  if (gone.length > 0)
    out.push(
      finding(
        'endpoint-pod-gone',
        'warn',
        `${count(gone.length, 'endpoint')} point${gone.length === 1 ? 's' : ''} at Pods that do not exist`,
        {
          explanation:
            'The EndpointSlices name Pods that were not found: the slices are stale, which usually means the endpoint controller is not running or cannot write.',
          evidence: gone.map((e) => read(`EndpointSlice ${e.slice}: ${endpointLine(e)}`)),
          next: endpointSlicesOf(svc, 'yaml'),
        },
      ),
    );
  const restarting = all.filter(
    (e) => e.ready && e.pod && e.pod.containerStatuses.some((c) => c.restartCount >= 3),
  );
  for (const e of restarting)
    out.push(
      finding(
        'pod-restarting',
        'warn',
        `Pod ${e.podName} is ready but has restarted ${Math.max(...e.pod!.containerStatuses.map((c) => c.restartCount))} times`,
        {
          explanation:
            'Each restart drops the connections it was serving and takes the endpoint out of rotation until the readiness probe passes again: intermittent failures.',
          evidence: whyNotReady(e.pod!).evidence,
          next: kubectl(svc.namespace, 'logs', valid.name(e.podName), '--previous'),
          node: e.nodeName,
        },
      ),
    );
  return out;
}

/** Endpoints counted as Pods: a dual-stack Pod is one endpoint with an address in each family. */
function perFamily(eps: PortEndpoint[]): { count: (list: PortEndpoint[]) => number; note: string } {
  const families = [...new Set(eps.map((e) => familyOf(e.ip)))].sort();
  if (families.length < 2) return { count: (l) => l.length, note: '' };
  const most = (l: PortEndpoint[]) =>
    Math.max(...families.map((f) => l.filter((e) => familyOf(e.ip) === f).length));
  return { count: most, note: ` (${families.join(' and ')})` };
}

function check(ctx: CheckContext, svc: Service): Finding[] {
  const out: Finding[] = [];
  const cause = ctx.causedBy('selector-matches-no-pods', 'target-port-not-exposed');
  const slices = ctx.slices();
  const unseen = slices.length === 0 ? ctx.slicesNotCaptured(svc) : undefined;
  if (unseen)
    return [
      finding('endpoints-not-observed', 'skip', 'EndpointSlices not captured', {
        explanation: `kdebug did not see the EndpointSlices of ${svc.namespace}/${svc.name} (${unseen}), so it cannot tell which endpoints kube-proxy sends traffic to; a refused read is not an empty Service.`,
        next: endpointSlicesOf(svc, 'wide'),
      }),
    ];
  const all = ctx.endpointAddresses();
  // why each endpoint is not ready: the cause of "no ready endpoints", said first
  const anyReady = all.some((e) => e.ready);
  const notReadyFindings = all
    .filter((x) => !x.ready && !x.terminating)
    .map((e) => notReady(ctx, svc, e, anyReady));
  const served = all.some((e) => e.ready || (e.serving && e.terminating));
  const missing = missingPods(ctx, svc, all, served);
  const unlisted = missing && consequence(missing, cause);
  // ready Pods no slice lists are the root of an endpoint-less Service: said first
  if (unlisted && !served) out.push(unlisted);
  if (!anyReady) out.push(...notReadyFindings);
  const why = [unlisted, ...notReadyFindings].find((f) => f?.status === 'fail');
  const noneReady = cause ?? (why ? { finding: why, step: 'Endpoints' } : undefined);
  for (const port of svc.ports.length > 0 ? svc.ports : [undefined]) {
    const eps = port ? ctx.endpoints(port) : all;
    const spn = port ? ctx.servicePortName(port) : undefined;
    const ready = eps.filter((e) => e.ready);
    const serving = eps.filter((e) => !e.ready && e.serving && e.terminating);
    const sliceEvidence = [
      ...(slices.length === 0
        ? [`no EndpointSlice has label kubernetes.io/service-name=${svc.name}`]
        : []),
      ...slices
        .filter((s) => s.endpoints.length === 0)
        .map((s) => `EndpointSlice ${s.name}: no endpoints`),
      // endpoints listed under another port's name are none of this port's
      ...slices
        .filter((s) => port && s.endpoints.length > 0 && !s.ports.some((p) => samePort(p, port)))
        .map(
          (s) =>
            `EndpointSlice ${s.name}: ${port!.name ? `no port named "${port!.name}" ${port!.protocol}` : `no unnamed ${port!.protocol} port`} (ports ${s.ports.map((p) => `${p.name || '(unnamed)'} ${p.port}/${p.protocol}`).join(', ')})`,
        ),
    ].map((l) => read(l));
    // each endpoint's line kept with it: a family's finding takes its endpoints' lines
    const lineOf = new Map(
      eps.map((e) => [e, read(`EndpointSlice ${e.slice}: ${endpointLine(e)}`)]),
    );
    const evidence = [...sliceEvidence, ...lineOf.values()];
    const linesOf = (of: PortEndpoint[]) => of.map((e) => lineOf.get(e)!);
    const what = port ? `${port.port}/${port.protocol}` : svc.name;
    const pods = perFamily(eps);
    const families = [...new Set(svc.clusterIPs.map(familyOf))].sort();
    // a dual-stack Service whose one family has ready endpoints and the other none
    if (
      families.length > 1 &&
      ready.length > 0 &&
      families.some((f) => !ready.some((e) => familyOf(e.ip) === f))
    ) {
      for (const f of families) {
        const of = eps.filter((e) => familyOf(e.ip) === f);
        const up = ready.filter((e) => familyOf(e.ip) === f);
        const ip = svc.clusterIPs.find((x) => familyOf(x) === f);
        out.push(
          up.length > 0
            ? finding(
                'endpoints-ready',
                'pass',
                `${f}: ${what}: ${up.length} of ${count(of.length, 'endpoint')} ready`,
                {
                  explanation: `${f} traffic for ${what} is balanced across ${list2(up)}.`,
                  evidence: linesOf(of),
                  service: spn,
                },
              )
            : finding('no-ready-endpoints', 'fail', `${f}: ${what}: no ready endpoints`, {
                explanation: `${svc.namespace}/${svc.name} is dual-stack: its ${f} cluster IP ${ip} is served by its ${f} endpoints only (kube-proxy's ${f} proxier reads the ${f} EndpointSlice), and ${of.length === 0 ? 'no EndpointSlice lists one' : `none of the ${count(of.length, 'endpoint')} is ready`}. kube-proxy would refuse ${f} clients while serving the other family's.`,
                evidence: [...sliceEvidence, ...linesOf(eps.filter((e) => !ready.includes(e)))],
                next: endpointSlicesOf(svc, 'wide'),
                service: spn,
              }),
        );
      }
      continue;
    }
    if (ready.length > 0) {
      const sure = ready.filter((e) => !inDoubt(ctx, svc, e));
      const doubted = ready.length - sure.length;
      // every ready one in doubt: no pass, their findings below say why
      if (sure.length > 0)
        out.push(
          finding(
            'endpoints-ready',
            'pass',
            `${what}: ${pods.count(sure)} of ${count(pods.count(eps), 'endpoint')} ready${pods.note}${doubted > 0 ? `; ${doubted} more listed ready, in doubt (below)` : ''}`,
            {
              explanation: `Traffic for ${what} is balanced across ${list2(ready)}${doubted > 0 ? `, of which ${list2(ready.filter((e) => inDoubt(ctx, svc, e)))} ${doubted === 1 ? 'is' : 'are'} in doubt: the findings below say why` : ''}.`,
              evidence,
              service: spn,
            },
          ),
        );
    } else if (serving.length > 0) {
      out.push(
        finding(
          'only-terminating-endpoints',
          'warn',
          `${what}: no ready endpoint, only ${count(serving.length, 'terminating one')}`,
          {
            explanation:
              'Every endpoint is terminating. kube-proxy 1.28+ keeps sending new connections to terminating endpoints that are still serving, but only until they are gone: the replacement Pods are not ready.',
            evidence,
            next: podsOf(svc),
            service: spn,
          },
        ),
      );
    } else {
      // kube-proxy before 1.19 routes by the legacy Endpoints: they may list what the slices lack
      const routed =
        eps.length === 0 && !svc.headless
          ? routedByEndpoints(ctx, svc, legacyReady(ctx, svc, port))
          : undefined;
      out.push(
        consequence(
          finding('no-ready-endpoints', routed ? 'warn' : 'fail', `${what}: no ready endpoints`, {
            explanation: routed
              ? `No EndpointSlice lists an endpoint for ${what}. ${routed}`
              : eps.length === 0
                ? `No endpoint is listed for ${what}: the EndpointSlices give ${svc.headless ? 'CoreDNS nothing to answer with' : 'kube-proxy nothing to send it to'}. ${effect(svc)}`
                : `${eps.length === 1 ? 'The only endpoint' : eps.length === 2 ? 'Both endpoints' : `All ${eps.length} endpoints`} of ${what} ${eps.length === 1 ? 'is' : 'are'} not ready, so none gets traffic. ${effect(svc)}`,
            evidence,
            next: endpointSlicesOf(svc, 'wide'),
            service: spn,
          }),
          noneReady,
        ),
      );
    }
  }
  if (anyReady) out.push(...notReadyFindings);
  if (svc.publishNotReadyAddresses)
    out.push(
      finding(
        'publish-not-ready-addresses',
        'pass',
        'publishNotReadyAddresses: Pods get traffic before they are ready',
        {
          explanation:
            'With spec.publishNotReadyAddresses the endpoint controller marks every selected Pod ready, whatever its readiness probe says (StatefulSet peers use this to find each other). Clients may reach Pods that are still starting.',
          evidence: [read('spec.publishNotReadyAddresses: true', serviceRef(svc))],
          info: true,
        },
      ),
    );
  return [
    ...out,
    ...legacyAgreement(ctx, svc, all),
    ...(unlisted && served ? [unlisted] : []),
    ...readyOnDownNodes(ctx, svc, all),
    ...readyInSliceOnly(ctx, svc, all),
    ...mismatches(ctx, svc, all),
  ];
}

/** Whether a slice port is the Service port's: the same name and protocol, as kube-proxy joins. */
const samePort = (
  p: { name: string; protocol: string },
  port: { name: string; protocol: string },
) => p.name === port.name && p.protocol === port.protocol;

/** What a Service without ready endpoints does to its clients. */
const effect = (svc: Service) =>
  svc.headless
    ? 'Its DNS name has no address records, so clients get NXDOMAIN.'
    : // what kube-proxy does, not what the nodes hold: the Rules and Reachability steps say that
      'For a Service without ready endpoints kube-proxy writes a REJECT rule for the ClusterIP instead of forwarding, so clients would get "connection refused" at once; the Rules step says whether the nodes hold that rule.';

const list2 = (eps: PortEndpoint[]) =>
  eps.length <= 3 ? eps.map((e) => hostPort(e.ip, e.port)).join(', ') : `${eps.length} endpoints`;

export const endpointsCheck: Check<'endpoints'> = {
  id: 'endpoints',
  title: 'Endpoints',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName'],
    id: 'endpoints-not-used',
    title: 'ExternalName: no endpoints',
    explanation:
      'An ExternalName Service has no endpoints: DNS sends the client to the external name.',
  },
  run(ctx) {
    const svc = ctx.service!;
    if (ctx.slices().length === 0 && ctx.waiting('objects'))
      return pending('reading the EndpointSlices');
    return check(ctx, svc);
  },
};
