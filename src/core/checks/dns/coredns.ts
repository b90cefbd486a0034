// Whether CoreDNS is up behind the kube-dns Service: read, with ready endpoints and Pods.
import { read, unseen } from '../../findings/evidence.js';
import type { Pod, Service } from '../../kube/objects.js';
import type { Evidence, Finding } from '../../model.js';
import { kubectl, valid, type NextCommand } from '../../findings/next-command.js';
import { count, findingOf, labelText } from '../check.js';
import type { CheckContext } from '../context.js';
import { podReady, whyNotReady } from '../pod-health.js';
import { selectorPatch } from '../selector.js';

const finding = findingOf('dns');

/** A cluster DNS server's image (CoreDNS, or the older kube-dns), whatever registry it came from. */
const DNS_IMAGE = /(?:^|\/)(?:coredns|k8s-dns-kube-dns(?:-[a-z0-9]+)?)(?::|@|$)/;

/** Why kube-dns's selector matches no Pod when that is not "no CoreDNS": the Pods were not read,
 * or kube-system runs DNS server Pods it does not select (then the patch); undefined otherwise. */
function selectorMisses(
  ctx: CheckContext,
  dns: Service,
): { title: string; why: string; evidence: Evidence[]; next: NextCommand | undefined } | undefined {
  if (!dns.selector) return undefined;
  const sel = labelText(dns.selector);
  const unread = ctx.notCaptured('Pod');
  if (unread)
    return {
      title: `kube-dns has no ready endpoints; its Pods (${sel}) were not read`,
      why: `no endpoint is ready behind it; whether CoreDNS Pods run is not known, as ${unread}`,
      evidence: [unseen(`Pods of kube-system with ${sel}: ${unread}`)],
      next: kubectl('kube-system', 'get', 'pods', '-l', valid.selector(dns.selector), '-o', 'wide'),
    };
  const servers = ctx.view.pods.filter(
    (p) => p.namespace === 'kube-system' && p.containers.some((c) => DNS_IMAGE.test(c.image ?? '')),
  );
  if (servers.length === 0) return undefined;
  // the selector's keys set to the values every DNS server Pod shares (null: not all have one)
  const fix = Object.fromEntries(
    Object.keys(dns.selector).flatMap((k) => {
      const values = new Set(servers.map((p) => p.labels[k]));
      const [v] = values;
      return values.size === 1 && v !== undefined ? [[k, v]] : [];
    }),
  );
  const ready = servers.filter(podReady).length;
  return {
    title: `kube-dns has no endpoints: its selector ${sel} matches none of the CoreDNS Pods`,
    why: `its selector ${sel} matches no Pod in kube-system, while ${count(servers.length, 'Pod')} there (${ready} ready) run${servers.length === 1 ? 's' : ''} a DNS server image with other labels: the endpoint controller puts none of them behind kube-dns, however healthy they are`,
    evidence: servers.map((p) =>
      read(
        `Pod ${p.name}: ${podReady(p) ? 'Ready' : 'not ready'}, labels ${labelText(p.labels) || '(none)'}, image ${p.containers.find((c) => DNS_IMAGE.test(c.image ?? ''))!.image}`,
      ),
    ),
    next:
      (Object.keys(fix).length > 0 ? selectorPatch(dns, fix) : undefined) ??
      kubectl('kube-system', 'get', 'service', 'kube-dns', '-o', 'yaml'),
  };
}

export function coreDns(ctx: CheckContext, dns: Service | undefined): Finding {
  const next = kubectl('kube-system', 'get', 'pods', '-l', 'k8s-app=kube-dns', '-o', 'wide');
  const unread = dns
    ? undefined
    : ctx.readError(
        (r) => r.resource === 'services' && r.namespace === 'kube-system' && r.name === 'kube-dns',
      );
  if (unread)
    return finding('coredns-not-observed', 'skip', 'the kube-dns Service was not read', {
      explanation: `${unread[0]!.toUpperCase()}${unread.slice(1)}, so kdebug does not know whether cluster DNS is there; a missing read is not a missing Service.`,
      evidence: [unseen(`Service kube-system/kube-dns: ${unread}`)],
      next: kubectl('kube-system', 'get', 'service', 'kube-dns'),
    });
  const first = dns?.ports[0];
  const slicesUnread =
    dns && first && ctx.endpointsOf(dns, first).length === 0
      ? ctx.slicesNotCaptured(dns)
      : undefined;
  if (slicesUnread)
    return finding('coredns-not-observed', 'skip', "kube-dns's endpoints were not read", {
      explanation: `${slicesUnread[0]!.toUpperCase()}${slicesUnread.slice(1)}, so kdebug does not know whether CoreDNS is behind the kube-dns Service; a missing read is not a DNS outage.`,
      evidence: [unseen(`EndpointSlices of kube-system/kube-dns: ${slicesUnread}`)],
      next: kubectl(
        'kube-system',
        'get',
        'endpointslices',
        '-l',
        'kubernetes.io/service-name=kube-dns',
      ),
    });
  if (!dns)
    return finding('coredns-unavailable', 'fail', 'no kube-dns Service in kube-system', {
      explanation:
        'Pods resolve names through the kube-dns Service (the nameserver in their /etc/resolv.conf). Without it no Service name resolves anywhere in the cluster.',
      evidence: [
        read(
          `no Service kube-dns among the ${count(ctx.view.services.filter((x) => x.namespace === 'kube-system').length, 'Service')} read in kube-system`,
        ),
      ],
      next: kubectl('kube-system', 'get', 'services,deployments', '-l', 'k8s-app=kube-dns'),
    });
  const pods = dns.selector
    ? ctx.view.pods.filter(
        (p) =>
          p.namespace === 'kube-system' &&
          Object.entries(dns.selector!).every(([k, v]) => p.labels[k] === v),
      )
    : [];
  const eps = dns.ports[0] ? ctx.endpointsOf(dns, dns.ports[0]) : [];
  const readyEps = eps.filter((e) => e.ready);
  const readyPods = pods.filter(podReady);
  const evidence = [
    `Service kube-system/kube-dns: ClusterIP ${dns.clusterIP}, ${dns.ports.map((p) => `${p.port}/${p.protocol}`).join(', ')}`,
    `kube-dns endpoints (port ${dns.ports[0]?.name || dns.ports[0]?.port}): ${readyEps.length} of ${eps.length} ready`,
    ...pods.map(
      (p: Pod) =>
        `Pod ${p.name}: ${p.phase}, ${podReady(p) ? 'Ready' : 'not ready'}${p.nodeName ? ` on ${p.nodeName}` : ''}`,
    ),
  ].map((l) => read(l));
  if (readyEps.length === 0) {
    const unmatched = pods.length === 0 ? selectorMisses(ctx, dns) : undefined;
    if (unmatched)
      return finding('coredns-unavailable', 'fail', unmatched.title, {
        explanation: `Every DNS query in the cluster goes to the kube-dns ClusterIP ${dns.clusterIP}, and ${unmatched.why}. With no ready endpoint behind it, kube-proxy rejects the queries, so every name lookup fails, for this Service and all others; clients that use a ClusterIP directly still work.`,
        evidence: [...evidence, ...unmatched.evidence],
        next: unmatched.next,
      });
    const first = pods[0] ? whyNotReady(pods[0]) : undefined;
    const why = !first
      ? 'there are no CoreDNS Pods at all (the coredns Deployment scaled to 0, or deleted)'
      : `${pods.length === 1 ? 'its one CoreDNS Pod is' : `its ${pods.length} CoreDNS Pods are`} not ready. In ${pods[0]!.name}, ${first.reason.replace(/^its /, '')}`;
    return finding(
      'coredns-unavailable',
      'fail',
      'CoreDNS is down: kube-dns has no ready endpoints',
      {
        explanation: `Every DNS query in the cluster goes to the kube-dns ClusterIP ${dns.clusterIP}, and ${why}. With no ready endpoint behind it, kube-proxy rejects the queries, so every name lookup fails, for this Service and all others, even though the Service itself may be fine: clients that use the ClusterIP directly still work.`,
        evidence: [...evidence, ...(first?.evidence ?? [])],
        next: !first
          ? kubectl('kube-system', 'scale', 'deployment', 'coredns', '--replicas=2')
          : first.crashed
            ? kubectl('kube-system', 'logs', valid.name(pods[0]!.name), '--previous')
            : kubectl('kube-system', 'describe', 'pod', valid.name(pods[0]!.name)),
      },
    );
  }
  if (readyPods.length < pods.length)
    return finding(
      'coredns-degraded',
      'warn',
      `CoreDNS: ${readyPods.length} of ${count(pods.length, 'Pod')} ready`,
      {
        explanation:
          'Lookups still work through the ready CoreDNS Pods, but with less headroom; a lookup may be slow while a client retries.',
        evidence,
        next,
      },
    );
  return finding(
    'coredns-ready',
    'pass',
    `CoreDNS up: kube-dns ${dns.clusterIP} has ${count(readyEps.length, 'ready endpoint')}`,
    { explanation: 'The cluster DNS Service has ready CoreDNS Pods behind it.', evidence },
  );
}
