// What the recorded lookups of the Service's names against kube-dns returned on each node,
// compared with the records the Service should have; alike answers on many nodes fold into one.
import { computed, unseen } from '../../findings/evidence.js';
import type { Finding } from '../../model.js';
import { kubectl, onNode, valid, w } from '../../findings/next-command.js';
import { type Cause, consequence, FEW_NODES, findingOf, foldNodes, listFew } from '../check.js';
import type { CheckContext } from '../context.js';
import { idleProbers, probeSeen, probingNodes, type NodeProbe } from '../reachability/probes.js';
import { plannedLookups, zoneMismatch, type Expected } from './records.js';

const finding = findingOf('dns');

const norm = (s: string) => s.toLowerCase().replace(/\.$/, '');
/** Recorded lookups of the Service's names against kube-dns, compared with what is expected. */
export function lookups(
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
      let asked = exp.name;
      for (const name of [exp.name, `${exp.name}.`]) {
        asked = name;
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
            `${exp.name} ${exp.type} -> ${exp.answers.length > 0 ? exp.answers.join(', ') : 'NXDOMAIN'} on ${n.length} nodes (${listFew(n, 3)})`,
          finding(
            'dns-answer-ok',
            'pass',
            // one per node that looked it up: each says where
            // the name that was looked up, as it was asked (never a shorter one it was not)
            `${node}: ${asked} ${exp.type} -> ${result.detail}`,
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
      const zone = result.rcode === 'NXDOMAIN' ? zoneMismatch(ctx) : undefined;
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
                : zone
                  ? `CoreDNS serves ${zone.served.join(', ')} (its Corefile's kubernetes plugin), while kubelet gives Pods the cluster domain ${zone.kubelet}: every Service name under ${zone.kubelet}, the ones Pods search, is NXDOMAIN. Make the Corefile's kubernetes zone ${zone.kubelet}, or kubelet's clusterDomain the zone CoreDNS serves.`
                  : `CoreDNS answered differently from what the Service objects say. A stale answer usually means CoreDNS cannot watch the API server (check its logs); NXDOMAIN for an existing Service means a wrong zone or namespace.`,
            evidence: [...ev, ...(zone?.evidence ?? [])],
            next: zone
              ? kubectl('kube-system', 'get', 'configmap', 'coredns', '-o', 'yaml')
              : kubectl('kube-system', 'logs', '-l', 'k8s-app=kube-dns', '--tail=50'),
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
