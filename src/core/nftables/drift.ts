// Drift in nftables mode, as far as it is modelled: each Service port's entry and endpoints in
// kube-proxy's table against the ones kube-proxy should use (the endpoint choice is the proxier's
// own, shared with iptables mode: ready, else serving and terminating; local for the local
// policies), and the no-endpoint reject. The same ids and meanings as iptables mode; what is not
// compared in this mode yet is said in a note.
import { SEVERITY, type DriftFinding, type DriftId, type NodeDrift } from '../drift.js';
import type { ExpectedRules } from '../expected.js';
import { percent } from '../model.js';
import type { ServiceTree, ServiceTrees } from '../service-tree.js';

export interface NftDriftInput {
  node: string;
  /** "nodes/NODE/nft-ip-kube-proxy.txt" */
  source: string;
  expected: ExpectedRules;
  trees: ServiceTrees;
}

export function nftablesDrift(input: NftDriftInput): NodeDrift {
  const { node, source, expected, trees } = input;
  const findings: DriftFinding[] = [];
  const add = (
    id: DriftId,
    f: Omit<DriftFinding, 'id' | 'severity' | 'node' | 'expected' | 'actual'>,
    actual: string[] = [],
  ) => findings.push({ id, severity: SEVERITY[id], node, expected: [], actual, ...f });
  const byName = new Map(trees.services.map((t) => [t.name, t]));
  for (const sp of expected.servicePorts) {
    const tree = byName.get(sp.name);
    const want = (sp.chains.svc ? sp.clusterEndpoints : sp.localEndpoints).map((e) => e.address);
    if (!sp.hasEndpoints) {
      if (!tree?.verdicts.some((v) => v.kind === 'reject' || v.kind === 'drop'))
        add('no-endpoints-reject-missing', {
          service: sp.name,
          title: `${sp.name} has no endpoints, and no reject for it`,
          message: `${sp.name} has no endpoints, but kube-proxy's table on ${node} has no no-endpoint-services element for ${sp.clusterIP}:${sp.port}: connections to it hang until they time out instead of being refused.`,
        });
      continue;
    }
    if (!tree || tree.entries.length === 0) {
      add('service-rules-missing', {
        service: sp.name,
        title: `no nftables rules for ${sp.name}`,
        message: `kube-proxy's table on ${node} has no service-ips element for ${sp.name} (${sp.clusterIP}:${sp.port}/${sp.protocol}), although it has ${want.length} endpoint${want.length === 1 ? '' : 's'}: connections to it from ${node} are not translated.`,
        next: `kubectl -n kube-system logs -l k8s-app=kube-proxy --field-selector spec.nodeName=${node}`,
      });
      continue;
    }
    const got = endpointsOf(tree, sp.chains.svc !== undefined);
    for (const a of want.filter((x) => !got.some((e) => e.address === x)))
      add('endpoint-missing', {
        service: sp.name,
        title: `endpoint ${a} missing`,
        message: `${a} is an endpoint of ${sp.name} kube-proxy should send to, but its table on ${node} does not: ${node}'s kube-proxy has not synced since the endpoint became ready.`,
      });
    for (const e of got.filter((x) => x.address && !want.includes(x.address)))
      add(
        'endpoint-stale',
        {
          service: sp.name,
          title: `DNAT to ${e.address}, no longer an endpoint`,
          message: `kube-proxy's table on ${node} still sends ${percent(e.probability)} of ${sp.name} to ${e.address}, which is not an endpoint kube-proxy should use now: those connections go to a Pod that is gone or not ready.`,
        },
        [`${source}: ${e.chain}`],
      );
  }
  return {
    node,
    source,
    tables: ['ip kube-proxy'],
    servicePorts: expected.servicePorts.length,
    findings,
    notes: [
      {
        id: 'nftables-partly-compared',
        severity: 'info',
        node,
        title: 'nftables mode: entries, endpoints and no-endpoint rejects compared',
        message: `On ${node} kube-proxy runs in nftables mode: kdebug compared each Service port's entry, its endpoints and the no-endpoint rejects with what kube-proxy should write; the masquerade marks, node ports, load-balancer source ranges and the exact rules are not compared yet.`,
        expected: [],
        actual: [],
        next: `nft list table ip kube-proxy   (on ${node})`,
      },
    ],
    drifted: findings.some((f) => f.severity !== 'info'),
  };
}

/** The endpoints a tree sends cluster traffic to (its service chain), else local traffic. */
function endpointsOf(tree: ServiceTree, cluster: boolean) {
  return cluster ? tree.endpoints : (tree.localEndpoints ?? []);
}
