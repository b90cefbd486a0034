// Step 5: cluster DNS. Is CoreDNS up behind the kube-dns Service; which names the Service answers
// to and with what; what a recorded lookup against the kube-dns ClusterIP actually returned; and
// the search path and ndots, which decide whether a short name works from another namespace.
import { computed, read, unseen } from '../evidence.js';
import type { Pod, Service } from '../kube/objects.js';
import type { Finding } from '../model.js';
import { kubectl, onNode, valid, w, NODE_DEBUG_IMAGE } from '../next-command.js';
import {
  type Cause,
  type Check,
  consequence,
  count,
  FEW_NODES,
  findingOf,
  foldNodes,
  listFew,
  pending,
} from './check.js';
import type { CheckContext } from './context.js';
import { podReady, whyNotReady } from './pod-health.js';
import { idleProbers, probeSeen, probingNodes, type NodeProbe } from './reachability/probes.js';

const finding = findingOf('dns');

/** The cluster domain: the first zone of the Corefile's kubernetes plugin, else cluster.local. */
export function clusterDomain(ctx: CheckContext): string {
  const corefile = ctx.view.configMaps.find(
    (c) => c.namespace === 'kube-system' && c.name === 'coredns',
  )?.data['Corefile'];
  const zones =
    /^\s*kubernetes\s+([^{\n]+)/m
      .exec(corefile ?? '')?.[1]
      ?.trim()
      .split(/\s+/) ?? [];
  return zones.find((z) => !z.endsWith('.arpa'))?.replace(/\.$/, '') ?? 'cluster.local';
}

export function kubeDnsService(ctx: CheckContext): Service | undefined {
  return (
    ctx.view.services.find((s) => s.namespace === 'kube-system' && s.name === 'kube-dns') ??
    ctx.view.services.find(
      (s) => s.namespace === 'kube-system' && s.raw.metadata?.labels?.['k8s-app'] === 'kube-dns',
    )
  );
}

interface Expected {
  name: string;
  type: 'A' | 'AAAA' | 'CNAME' | 'SRV';
  /** The answers CoreDNS should give; empty for NXDOMAIN. */
  answers: string[];
}

/** The records the Service should have, FQDN first. */
function expectedRecords(ctx: CheckContext, svc: Service, domain: string): Expected[] {
  const fqdn = `${svc.name}.${svc.namespace}.svc.${domain}`;
  if (svc.type === 'ExternalName')
    return [{ name: fqdn, type: 'CNAME', answers: [`${svc.externalName}.`] }];
  const eps = ctx.endpointAddresses().filter((e) => e.ready || svc.publishNotReadyAddresses);
  // one address record per family the Service has: A for IPv4, AAAA for IPv6
  const addresses = svc.headless ? eps.map((e) => e.ip).sort() : svc.clusterIPs;
  const v4 = addresses.filter((ip) => !ip.includes(':'));
  const v6 = addresses.filter((ip) => ip.includes(':'));
  const out: Expected[] = [
    ...(v4.length > 0 || v6.length === 0 ? [{ name: fqdn, type: 'A' as const, answers: v4 }] : []),
    ...(v6.length > 0 ? [{ name: fqdn, type: 'AAAA' as const, answers: v6 }] : []),
  ];
  if (svc.headless) {
    const slicesHost = ctx
      .slices()
      .flatMap((s) =>
        s.endpoints.filter(
          (e) => e.hostname && (e.conditions.ready || svc.publishNotReadyAddresses),
        ),
      );
    for (const e of slicesHost)
      out.push({
        name: `${e.hostname}.${fqdn}`,
        type: e.addresses[0]!.includes(':') ? 'AAAA' : 'A',
        answers: [e.addresses[0]!],
      });
  }
  for (const p of svc.ports.filter((x) => x.name)) {
    // headless: one SRV per endpoint, to its hostname or dashed IP, with CoreDNS's even weights
    const targets = svc.headless
      ? ctx
          .endpoints(p)
          .filter((e) => e.ready || svc.publishNotReadyAddresses)
          .map((e) => ({
            port: e.port,
            host: `${e.hostname ?? e.ip.replace(/\./g, '-')}.${fqdn}.`,
          }))
      : [{ port: p.port, host: `${fqdn}.` }];
    const weight = Math.floor(100 / Math.max(1, targets.length));
    out.push({
      name: `_${p.name}._${p.protocol.toLowerCase()}.${fqdn}`,
      type: 'SRV',
      answers: targets.map((t) => `0 ${weight} ${t.port} ${t.host}`),
    });
  }
  return out;
}

function coreDns(ctx: CheckContext, dns: Service | undefined): Finding {
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

const norm = (s: string) => s.toLowerCase().replace(/\.$/, '');

/** The lookups a live run makes on each node (diagnose's probePlan): the Service's own name
 * against kube-dns, one record per family it has (a headless Service's from its endpoints), a
 * CNAME for ExternalName. What a node did not record of these, it did not observe. */
export function plannedLookups(ctx: CheckContext): (NodeProbe & { kind: 'dns-lookup' })[] {
  const svc = ctx.service;
  const dns = kubeDnsService(ctx);
  if (!svc || !dns?.clusterIP || dns.clusterIP === 'None') return [];
  const name = `${svc.name}.${svc.namespace}.svc.${clusterDomain(ctx)}`;
  const addresses = svc.headless
    ? svc.ports.flatMap((p) => ctx.endpoints(p).map((e) => e.ip))
    : svc.clusterIPs;
  const v6 = addresses.some((ip) => ip.includes(':'));
  const v4 = addresses.some((ip) => !ip.includes(':'));
  const types: ('A' | 'AAAA' | 'CNAME')[] =
    svc.type === 'ExternalName'
      ? ['CNAME']
      : [...(v4 || !v6 ? ['A' as const] : []), ...(v6 ? ['AAAA' as const] : [])];
  return types.map((type) => ({ kind: 'dns-lookup', name, server: dns.clusterIP!, type }));
}

/** Recorded lookups of the Service's names against kube-dns, compared with what is expected. */
function lookups(
  ctx: CheckContext,
  expected: Expected[],
  server: string | undefined,
  dnsDown: Cause | undefined,
): Finding[] {
  if (!server) return [];
  const out: Finding[] = [];
  const cause = dnsDown ?? ctx.causedBy('no-ready-endpoints', 'selector-matches-no-pods');
  // the nodes read, with or without probes: a lookup missing there was not observed
  const read = new Set([...probingNodes(ctx), ...idleProbers(ctx)]);
  // what a live run looks up (its plan): never the SRV records, nor a StatefulSet Pod's name
  const plan = plannedLookups(ctx);
  const planned = (e: Expected) => plan.some((p) => p.name === e.name && p.type === e.type);
  const unrecorded = new Map<Expected, string[]>();
  // a lookup's answer alike on many nodes is one finding (foldNodes), each kept in node order
  const alike = new Map<string, { found: Finding[]; title: (nodes: string[]) => string }>();
  const sameOn = (key: string, title: (nodes: string[]) => string, f: Finding) => {
    let group = alike.get(key);
    if (!group) alike.set(key, (group = { found: [], title }));
    group.found.push(f);
    out.push(f);
  };
  for (const node of ctx.nodeNames()) {
    for (const exp of expected) {
      let probe: NodeProbe | undefined;
      let result;
      for (const name of [exp.name, `${exp.name}.`]) {
        probe = { kind: 'dns-lookup', name, server, type: exp.type };
        result = ctx.probe(node, probe);
        if (result) break;
      }
      if (!result || !probe) {
        // a node that ran the probes (or was read and ran none) without this lookup of the
        // plan's: not observed there, never passed over
        if (planned(exp) && read.has(node))
          unrecorded.set(exp, [...(unrecorded.get(exp) ?? []), node]);
        continue;
      }
      if (result.status === 'unknown') {
        // no lookup was made: the answer is neither right nor wrong
        sameOn(
          `unknown ${exp.type} ${exp.name}`,
          (n) => `lookup of ${exp.name} not observed on ${n.length} nodes (${listFew(n, 3)})`,
          finding(
            'dns-lookup-not-observed',
            'skip',
            `lookup of ${exp.name} not observed on ${node}`,
            {
              explanation: `The lookup could not run on ${node} (${result.detail}), so kdebug did not see what CoreDNS answers. Run it with an image that has dig or nslookup (kdebug's default debug image does), or over SSH (--via ssh).`,
              evidence: [probeSeen(node, probe, result)],
              next: onNode(node, ['dig', w`@${valid.ip(server)}`, valid.dnsName(exp.name)]),
              node,
            },
          ),
        );
        continue;
      }
      const got = (result.answers ?? []).map(norm).sort();
      const want = exp.answers.map(norm).sort();
      const matches =
        want.length === 0
          ? result.rcode === 'NXDOMAIN'
          : result.status === 'pass' &&
            (exp.type === 'A' || exp.type === 'AAAA'
              ? got.join() === want.join()
              : want.every((w) => got.includes(w)));
      const ev = [
        probeSeen(node, probe, result),
        computed(want.length > 0 ? exp.answers.join(', ') : 'NXDOMAIN (no ready endpoints)'),
      ];
      if (matches) {
        sameOn(
          `ok ${exp.type} ${exp.name}`,
          (n) =>
            `${exp.name.replace(/\.svc\..*$/, '')} ${exp.type} -> ${exp.answers.length > 0 ? exp.answers.join(', ') : 'NXDOMAIN'} on ${n.length} nodes (${listFew(n, 3)})`,
          finding(
            'dns-answer-ok',
            'pass',
            // one per node that looked it up: each says where
            `${node}: ${exp.name.replace(/\.svc\..*$/, '')} ${exp.type} -> ${result.detail}`,
            {
              explanation:
                'The lookup through the kube-dns ClusterIP returned what the Service objects say.',
              evidence: ev,
              node,
            },
          ),
        );
        continue;
      }
      const refused = result.failure === 'refused';
      const silent = result.failure !== undefined;
      const expectedText = want.length > 0 ? exp.answers.join(', ') : 'NXDOMAIN';
      const what = silent
        ? `lookup of ${exp.name} ${refused ? 'refused' : 'timed out'}`
        : `${exp.name} ${exp.type} -> ${result.detail}`;
      // the same wrong answer on many nodes is one finding
      // keyed by the answers sorted: CoreDNS's loadbalance plugin shuffles them
      sameOn(
        `wrong ${exp.type} ${exp.name} ${silent ? what : got.join(',')}`,
        (n) => `${what} on ${n.length} nodes (${listFew(n, 3)}), expected ${expectedText}`,
        consequence(
          finding('dns-answer-wrong', 'fail', `${what}, expected ${expectedText}`, {
            explanation: refused
              ? `The lookup against kube-dns ${server} from node ${node} was refused: nothing answers DNS behind the ClusterIP (with no ready CoreDNS endpoint, kube-proxy rejects the queries).`
              : silent
                ? `The lookup against kube-dns ${server} from node ${node} got no answer: CoreDNS is not reachable through its ClusterIP from there (its Pods, or the Pod network between this node and them).`
                : `CoreDNS answered differently from what the Service objects say. A stale answer usually means CoreDNS cannot watch the API server (check its logs); NXDOMAIN for an existing Service means a wrong zone or namespace.`,
            evidence: ev,
            next: kubectl('kube-system', 'logs', '-l', 'k8s-app=kube-dns', '--tail=50'),
            node,
          }),
          cause,
        ),
      );
    }
  }
  for (const { found, title } of alike.values()) {
    if (found.length <= FEW_NODES) continue;
    const folded = new Set(found);
    out.splice(0, out.length, ...out.filter((f) => !folded.has(f)), ...foldNodes(found, title));
  }
  for (const [exp, nodes] of unrecorded)
    out.push(
      finding(
        'dns-lookup-not-observed',
        'skip',
        `${exp.type} lookup of ${exp.name} not recorded on ${listFew(nodes, 3)}`,
        {
          explanation: `No ${exp.type} lookup of ${exp.name} was recorded on ${listFew(nodes, 3)}, so kdebug did not see what CoreDNS answers there.`,
          evidence: nodes.map((n) =>
            unseen(`${n}: no ${exp.type} lookup of ${exp.name} recorded`, n),
          ),
          // the record type asked (dig asks A by default); a fixed word of kdebug's
          next: onNode(nodes[0]!, [
            'dig',
            w`@${valid.ip(server)}`,
            valid.dnsName(exp.name),
            exp.type,
          ]),
          ...(nodes.length === 1 ? { node: nodes[0] } : { nodes }),
        },
      ),
    );
  return out;
}

function names(svc: Service, expected: Expected[], domain: string): Finding {
  const fqdn = `${svc.name}.${svc.namespace}.svc.${domain}`;
  const shown = expected.map(
    (e) =>
      `${e.name} ${e.type} -> ${e.answers.length > 0 ? e.answers.join(', ') : 'NXDOMAIN (no ready endpoints)'}`,
  );
  return finding('dns-names', 'pass', `${svc.name}, ${svc.name}.${svc.namespace} and ${fqdn}`, {
    explanation: `From a Pod in namespace ${svc.namespace}, "${svc.name}" resolves through the first search domain (${svc.namespace}.svc.${domain}). From any other namespace the short name fails: use "${svc.name}.${svc.namespace}" (found through the "svc.${domain}" search domain) or the full name. With the default "options ndots:5", a name with fewer than 5 dots is tried with each search domain first, so "${svc.name}.${svc.namespace}" costs a few NXDOMAIN round trips before it resolves; "${fqdn}." with the final dot goes straight to the answer. Pods with hostNetwork need dnsPolicy ClusterFirstWithHostNet to use cluster DNS at all.`,
    evidence: [
      ...shown,
      `search path in a Pod of ${svc.namespace}: ${svc.namespace}.svc.${domain} svc.${domain} ${domain}`,
    ].map((l) => computed(l)),
    // the names follow from the Service's name: an explanation, not something observed
    info: true,
    folded: true,
  });
}

export const dnsCheck: Check<'dns'> = {
  id: 'dns',
  title: 'DNS',
  needs: ['service'],
  run(ctx) {
    const svc = ctx.service!;
    const dns = kubeDnsService(ctx);
    if (!dns && ctx.waiting('objects')) return pending('reading the kube-dns Service');
    const recordedSystem =
      ctx.view.pods.some((p) => p.namespace === 'kube-system') ||
      ctx.view.configMaps.some((c) => c.namespace === 'kube-system');
    const domain = clusterDomain(ctx);
    const expected = expectedRecords(ctx, svc, domain);
    const named = names(svc, expected, domain);
    if (!dns && !recordedSystem)
      return [
        named,
        finding(
          'coredns-not-recorded',
          'skip',
          'cluster DNS was not recorded (no kube-system objects)',
          {
            explanation:
              'The facts hold no kube-dns Service or CoreDNS Pods, so kdebug cannot tell whether DNS works.',
            evidence: [unseen('no kube-system objects were recorded')],
            next: kubectl('kube-system', 'get', 'service', 'kube-dns'),
          },
        ),
      ];
    const core = coreDns(ctx, dns);
    const found = lookups(
      ctx,
      expected,
      dns?.clusterIP,
      core.status === 'fail' ? { finding: core, step: 'DNS' } : undefined,
    );
    if (found.length === 0 && ctx.waiting('nodes'))
      return pending('waiting for the DNS lookups on the nodes');
    if (found.length === 0 && ctx.nodeNames().length > 0 && dns)
      found.push(
        finding('dns-lookup-not-recorded', 'skip', 'no recorded lookup of the Service name', {
          explanation: `No node ran a lookup against kube-dns ${dns.clusterIP}, so the answer CoreDNS gives was not checked.`,
          evidence: [
            unseen(`no lookup of ${svc.name}'s names against ${dns.clusterIP} was recorded`),
          ],
          // a Pod's view of DNS: the lookup as the Service's clients make it
          next: kubectl(
            svc.namespace,
            'run',
            'kdebug-dig',
            '-it',
            '--rm',
            '--restart=Never',
            `--image=${NODE_DEBUG_IMAGE}`,
            '--',
            'dig',
            w`@${valid.ip(dns.clusterIP)}`,
            valid.dnsName(expected[0]!.name),
          ),
        }),
      );
    // a lookup that answered as expected is the best summary of the step
    return found.some((f) => f.status === 'pass')
      ? [...found, core, named]
      : [core, named, ...found];
  },
};
