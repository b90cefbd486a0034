// Step 10: a Pod reaching itself through its own Service. The DNAT makes source and destination
// the same Pod; unless the KUBE-SEP chain marks that packet for masquerade, the reply goes back
// inside the Pod from its own address and the client drops it. Checked on each endpoint's node.
import { read, stateSeen, unseen } from '../findings/evidence.js';
import { percent, type Evidence, type Finding } from '../model.js';
import { kubectl, valid, kdebug } from '../findings/next-command.js';
import {
  addressHolder,
  noPodHas,
  type Check,
  consequence,
  count,
  findingOf,
  list,
  pending,
  type Cause,
} from './check.js';
import type { CheckContext, PortEndpoint } from './context.js';
import type { ServicePort } from '../kube/objects.js';
import { endpointsOf } from '../dataplane/kube-proxy/endpoint-source.js';
import { podOf, type ProxyEndpoint } from '../dataplane/kube-proxy/endpoints.js';
import { kubeProxyPods } from './kube-proxy/pods.js';
import { replacement } from './kube-proxy/replacement.js';
import { rulesRead } from './rules/compared.js';
import { canonicalAddress, familyOf, hostPort } from '../ipv6.js';
import { BRIDGE_NOTE } from '../dataplane/hairpin.js';
import { modeTraits } from '../dataplane/mode-traits.js';
import { packetWalk, type WalkRequest } from './reachability/packet-evidence.js';
import { readOn, trafficLost } from './symptom.js';

const finding = findingOf('hairpin');

/** The endpoints a hairpin check looked at: those it saw masqueraded (with the rules that do it),
 * and those it could not check on their node (with why). */
interface Looked {
  present: Evidence[];
  /** The endpoints seen masqueraded, whose connections to the Service their node's rules take. */
  checked: number;
  /** Masqueraded where the node's rules lose a share of connections to the Service: symptoms. */
  lost: Lost[];
  /** `family`: where the endpoints are of both families, which one's endpoint it is. */
  unchecked: { who: string; node?: string; why: string; family?: string }[];
}

/** An endpoint masqueraded on its node, whose rules do not take `share` of connections to the
 * Service (`to`) to an endpoint, as the Rules finding `cause` there says. */
interface Lost {
  who: string;
  node: string;
  to: WalkRequest;
  evidence: Evidence[];
  lost: { share: number; unknown: boolean };
  cause: Cause;
  service: string;
}

const looked = (): Looked => ({ present: [], checked: 0, lost: [], unchecked: [] });

/** The endpoints that were masqueraded (`how`, with the rules that do it), and a finding that says
 * which ones were not checked: a pass speaks only for the endpoints it saw. */
function hairpinPresent(how: string, l: Looked): Finding[] {
  const all = l.checked + l.lost.length + l.unchecked.length;
  const out: Finding[] = [];
  if (l.checked > 0)
    out.push(
      finding(
        'hairpin-masquerade-present',
        'pass',
        l.checked === all
          ? 'a Pod reaching itself through the Service is masqueraded'
          : `${l.checked} of ${count(all, 'endpoint')}: a Pod reaching itself through the Service is masqueraded`,
        { explanation: `${how} ${BRIDGE_NOTE}`, evidence: l.present },
      ),
    );
  if (l.unchecked.length > 0)
    out.push(
      finding(
        'hairpin-not-observed',
        'skip',
        `hairpin of ${list(uncheckedNames(l.unchecked))} not checked`,
        {
          explanation:
            "kdebug checks each ready endpoint's hairpin masquerade on the endpoint's own node; for these it could not, for the reason beside each, so nothing is said about them.",
          evidence: l.unchecked.map((u) =>
            unseen(
              `${u.who}${u.family ? ` (${u.family})` : ''}${u.node ? ` on ${u.node}` : ''}: ${u.why}`,
              u.node,
            ),
          ),
        },
      ),
    );
  return out;
}

/** Each endpoint not checked, once: a Pod of both families not checked in either is named once
 * with both ("web-1 (IPv4 and IPv6)"), never twice as if two Pods. */
function uncheckedNames(unchecked: Looked['unchecked']): string[] {
  const families = new Map<string, string[]>();
  for (const u of unchecked) {
    const f = families.get(u.who) ?? (families.set(u.who, []), families.get(u.who)!);
    if (u.family && !f.includes(u.family)) f.push(u.family);
  }
  return [...families].map(([who, f]) =>
    f.length > 0 ? `${who} (${f.sort().join(' and ')})` : who,
  );
}

/** The port's ready endpoints, each as its own node's kube-proxy reads them (the legacy Endpoints
 * before 1.19), as the Rules step expects that node's rules: the nodes read, and those any of the
 * objects places an endpoint on. */
function readyEndpoints(ctx: CheckContext, port: ServicePort): ProxyEndpoint[] {
  const svc = ctx.service!;
  const placed = [
    ...ctx.endpoints(port).flatMap((e) => (e.nodeName ? [e.nodeName] : [])),
    ...endpointsOf(ctx.view, svc).flatMap((o) =>
      o.subsets.flatMap((s) => s.addresses.flatMap((a) => (a.nodeName ? [a.nodeName] : []))),
    ),
  ];
  return [...new Set([...ctx.nodeNames(), ...placed])]
    .sort()
    .flatMap((node) => ctx.proxiedEndpoints(port, node).all.filter((e) => e.ready))
    .sort((a, b) => (`${a.ip}:${a.port}` < `${b.ip}:${b.port}` ? -1 : 1));
}

/** The port's ready endpoints that no object places on a node (a hand-made slice without
 * nodeName): which node's rules hold their hairpin is not known. */
function unplaced(ctx: CheckContext, port: ServicePort): PortEndpoint[] {
  const placed = new Set(readyEndpoints(ctx, port).map((e) => canonicalAddress(e.ip)));
  return ctx
    .endpoints(port)
    .filter((e) => e.ready && !e.nodeName && !placed.has(canonicalAddress(e.ip)));
}

/** Why an endpoint no object places on a node is not checked, in the Endpoints step's words. */
function unplacedWhy(ctx: CheckContext, e: PortEndpoint): string {
  const holder = e.podName ? 'held' : addressHolder(ctx, e.ip);
  if (holder === 'none') return 'no Pod or node has this address';
  if (holder === 'held')
    return 'no object places it on a node, so whose rules to read is not known';
  return `no Pod named, and whether one holds it is not known (${holder.unknown}), so neither is its node`;
}

/** Each ready endpoint on its own node, as that node's dataplane answers its hairpin. */
function check(ctx: CheckContext): Finding[] {
  const svc = ctx.service!;
  const out: Finding[] = [];
  const l = looked();
  const hows = new Set<string>();
  // endpoints of both families: each one not checked says which family's it is
  const dual =
    new Set(svc.ports.flatMap((p) => readyEndpoints(ctx, p).map((e) => familyOf(e.ip) ?? 'IPv4')))
      .size > 1;
  for (const port of svc.ports) {
    const spn = ctx.servicePortName(port);
    for (const e of unplaced(ctx, port))
      l.unchecked.push({ who: hostPort(canonicalAddress(e.ip), e.port), why: unplacedWhy(ctx, e) });
    for (const e of readyEndpoints(ctx, port)) {
      const node = e.nodeName!;
      const family = familyOf(e.ip) ?? 'IPv4';
      const n = ctx.analysis.node(node, undefined, family);
      const dp = n.dataplane();
      const podName = podOf(e) && e.ref!.name;
      const who = podName ?? hostPort(canonicalAddress(e.ip), e.port);
      const tag = dual && podName ? { family } : {};
      if (!dp || dp.mode !== n.mode()) {
        // no state of its mode read there: the Rules step says so
        const word = modeTraits(n.mode())?.state?.word;
        const why = !dp
          ? `its ${family} rules were not read`
          : word
            ? `its ${word} state was not read`
            : `kdebug does not read ${n.mode()} mode`;
        l.unchecked.push({ who, node, why, ...tag });
        continue;
      }
      // rules not read (a dump cut short) are not cited; kube-ipvs0 unread hides no ipset fact
      if (!rulesRead(ctx, node, family)) {
        const why = 'its rules were not compared (the Rules step says why)';
        l.unchecked.push({ who, node, why, ...tag });
        continue;
      }
      const tree = n.trees(ctx.scope)?.services.find((t) => t.name === spn);
      const endpoint = [...(tree?.endpoints ?? []), ...(tree?.localEndpoints ?? [])].find(
        (x) => x.address === hostPort(canonicalAddress(e.ip), e.port) || x.inferredIP === e.ip,
      );
      const answer = dp.hairpin({
        node,
        ip: e.ip,
        port: e.port,
        protocol: port.protocol,
        ...(podName ? { podName } : {}),
        ...(endpoint ? { endpoint } : {}),
      });
      if (answer.kind === 'not-checked') {
        l.unchecked.push({ who, node, why: answer.why, ...tag });
        continue;
      }
      hows.add(dp.hairpinHow);
      const evidence = answer.lines.map((x) => stateSeen(node, x));
      if (answer.kind === 'masqueraded') {
        // the Pod's connection to the Service's address of its family, as its node's rules take it
        const vip = svc.clusterIPs.find((ip) => familyOf(ip) === family);
        const to = vip && { dst: vip, port: port.port, proto: port.protocol.toLowerCase() };
        const lost = to && trafficLost(ctx, node, to);
        if (to && lost) l.lost.push({ who, node, to, evidence, ...lost, service: spn });
        else {
          l.checked++;
          l.present.push(...evidence);
        }
        continue;
      }
      const pod = kubeProxyPods(ctx).find((p) => p.nodeName === node);
      out.push(
        consequence(
          finding(
            'hairpin-masquerade-missing',
            'fail',
            `${who} cannot reach itself through the Service: ${answer.title}`,
            {
              explanation: answer.explanation,
              evidence,
              next:
                answer.next !== 'restart-kube-proxy'
                  ? answer.next
                  : pod
                    ? kubectl('kube-system', 'delete', 'pod', valid.name(pod.name))
                    : kdebug(['drift', '--node', valid.name(node)]),
              node,
              service: spn,
            },
          ),
          ctx.causedBy(...answer.causes),
        ),
      );
    }
  }
  const symptoms = l.lost.map((x) => lostOn(ctx, x));
  // a failure elsewhere leaves the endpoints not checked unchecked: said beside it, as always
  if (out.length > 0) return [...out, ...symptoms, ...hairpinPresent('', { ...l, checked: 0 })];
  return [...symptoms, ...hairpinPresent([...hows].join(' '), l)];
}

/** A Pod masqueraded on its node, whose rules lose a share of connections to the Service: its
 * hairpin connection is lost there as any other, so no pass: the Rules finding's symptom. */
function lostOn(ctx: CheckContext, x: Lost): Finding {
  const share = x.lost.unknown ? 'a share' : percent(x.lost.share);
  const to = hostPort(x.to.dst, x.to.port!);
  return consequence(
    finding(
      'hairpin-masquerade-present',
      'fail',
      `${x.who} is masqueraded on ${x.node}, but its rules do not take ${share} of connections to ${to} to an endpoint`,
      {
        explanation: `${x.node} masquerades ${x.who} reaching itself through the Service, but the Rules step read rules on ${x.node} that do not take ${share} of new connections to ${to} to an endpoint (the walk says where they go): that share never reaches ${x.who}, nor comes back to it.`,
        evidence: [
          ...x.evidence,
          ...readOn(x.cause, x.node),
          ...packetWalk(ctx, x.node, x.to, true),
        ],
        next: x.cause.finding.next ?? kdebug(['drift', '--node', valid.name(x.node)]),
        node: x.node,
        service: x.service,
      },
    ),
    x.cause,
  );
}

/** Ready endpoints none of which is a Pod (the API server's host address behind
 * default/kubernetes, a node's address, an address outside the cluster): no Pod can be sent to
 * itself, said as that, not as "no ready endpoints". */
function readyNotPods(ctx: CheckContext): Finding | undefined {
  const svc = ctx.service!;
  const ready = svc.ports.flatMap((p) => ctx.endpoints(p)).filter((e) => e.ready);
  // a hostNetwork Pod's address is its node's: no Pod of its own
  const aPods = (ip: string) =>
    ctx.view.pods.some(
      (p) => !p.hostNetwork && p.podIPs.some((x) => canonicalAddress(x) === canonicalAddress(ip)),
    );
  if (ready.length === 0 || ready.some((e) => e.pod || e.podName || aPods(e.ip))) return undefined;
  const addresses = [...new Set(ready.map((e) => hostPort(e.ip, e.port)))];
  const nodeOf = (ip: string) =>
    ctx.view.nodes.find((n) => n.ips.some((x) => canonicalAddress(x) === canonicalAddress(ip)));
  const apiServer = svc.namespace === 'default' && svc.name === 'kubernetes';
  const onNodes = ready.every((e) => nodeOf(e.ip));
  // no Pod or node has them (the Endpoints step says so); where that is not known, check says why
  const nobody = ready.every((e) => noPodHas(ctx, e.ip));
  if (!apiServer && !onNodes && !nobody) return undefined;
  const one = addresses.length === 1;
  const what = apiServer
    ? "the API server's host address"
    : onNodes
      ? "a node's own address (host network)"
      : `no Pod or node has ${one ? 'it' : 'them'}`;
  return finding(
    'hairpin-not-checked',
    'skip',
    `${one ? 'its endpoint is' : 'its endpoints are'} not ${one ? 'a Pod' : 'Pods'} (${what}): no Pod can be sent to itself`,
    {
      explanation: `${list(addresses)} ${one ? 'is' : 'are'} ${apiServer ? "the API server's host address, which the API server itself writes into default/kubernetes' endpoints" : onNodes ? "a node's own address" : 'held by no Pod and no node'}: hairpin traffic needs an endpoint that is also the client Pod, so there is nothing to check.`,
      evidence: ready.map((e) =>
        read(
          `EndpointSlice ${e.slice}: ${hostPort(e.ip, e.port)} ready${nodeOf(e.ip) ? ` (Node ${nodeOf(e.ip)!.name}'s address)` : ''}, no Pod named`,
        ),
      ),
    },
  );
}

export const hairpinCheck: Check<'hairpin'> = {
  id: 'hairpin',
  title: 'Hairpin',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName', 'headless'],
    id: 'hairpin-not-used',
    title: 'no virtual IP: a Pod connects to itself directly',
    explanation:
      'Hairpin masquerade is only needed when a Service address is translated to the Pod that sent the packet.',
  },
  run(ctx) {
    if (replacement(ctx))
      return [
        finding('hairpin-not-checked', 'skip', 'no kube-proxy rules to read', {
          explanation: 'The Service proxy is not kube-proxy (see kube-proxy above).',
        }),
      ];
    if (!ctx.nodeNames().some((n) => ctx.analysis.node(n).dataplane())) {
      if (ctx.waiting('nodes')) return pending('waiting for the node rules');
      return [
        finding('hairpin-not-checked', 'skip', 'no node rules recorded', {
          explanation:
            "The hairpin rule lives in each node's nat table; no rules dump was recorded.",
        }),
      ];
    }
    const found = check(ctx);
    const notPods = readyNotPods(ctx);
    if (notPods) return [notPods];
    const ports = ctx.service!.ports;
    if (!ports.some((p) => readyEndpoints(ctx, p).length > 0 || unplaced(ctx, p).length > 0))
      return [
        finding('hairpin-not-checked', 'skip', 'no ready endpoints: no Pod can be sent to itself', {
          explanation: 'Hairpin traffic needs an endpoint that is also the client.',
        }),
      ];
    if (found.length === 0)
      return [
        finding('hairpin-not-checked', 'skip', "no ready endpoint is in its node's rules", {
          explanation: 'There is nothing to check until the endpoints have rules (see Rules).',
        }),
      ];
    return found;
  },
};
