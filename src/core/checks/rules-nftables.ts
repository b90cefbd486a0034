// Step 7 on a node whose kube-proxy runs in nftables mode: the Service's trees read back from
// its nftables table, and their endpoints compared with the ones kube-proxy should send to (the
// same endpoint choice as iptables mode: ready, else serving and terminating; local ones for
// the local policies). What is not compared yet in this mode is said, not passed.
import type { Service } from '../kube.js';
import type { Finding } from '../model.js';
import { finding, count, kubectl } from './check.js';
import type { CheckContext } from './context.js';

/** The Rules step's findings for one nftables-mode node. */
export function nftablesNode(ctx: CheckContext, node: string, svc: Service): Finding[] {
  const read = ctx.analysis.node(node).nft();
  if (!read)
    return [
      finding('rules-nftables-not-observed', 'skip', `${node}: nftables mode, its table not read`, {
        explanation: `kube-proxy on ${node} runs in nftables mode and kdebug did not read its table (nodes/${node}/nft-ip-kube-proxy.txt is not in the facts), so ${svc.namespace}/${svc.name} is not checked there.`,
        next: `nft -j list table ip kube-proxy > nodes/${node}/nft-ip-kube-proxy.txt   (on ${node})`,
        node,
      }),
    ];
  if (!read.trees)
    return [
      finding('rules-unreadable', 'warn', `${node}: the nftables table cannot be read`, {
        explanation: read.error ?? 'unreadable',
        evidence: [read.source],
        node,
      }),
    ];
  const expected = ctx.analysis.node(node).expected(ctx.scope);
  const out: Finding[] = [];
  const parts: string[] = [];
  const evidence: string[] = [];
  for (const port of svc.ports) {
    const name = ctx.servicePortName(port);
    const sp = expected.servicePorts.find((p) => p.name === name);
    const tree = read.trees.services.find((t) => t.name === name);
    const label = `${port.port}/${port.protocol}`;
    if (!sp) continue; // not modelled (another family): said by the IPv6 finding
    const want = (sp.chains.svc ? sp.clusterEndpoints : sp.localEndpoints).map((e) => e.address);
    const got = (tree ? (tree.chains.svc ? tree.endpoints : (tree.localEndpoints ?? [])) : [])
      .map((e) => e.address)
      .filter((a): a is string => a !== undefined);
    if (!tree || (tree.entries.length === 0 && want.length > 0)) {
      out.push(
        finding('service-rules-missing', 'fail', `${node}: no nftables rules for ${label}`, {
          explanation: `kube-proxy's table on ${node} has no service-ips element for ${name}, although the Service has ${count(want.length, 'endpoint')}: connections to it from ${node} are not translated.`,
          evidence: [read.source],
          next: kubectl(
            'kube-system',
            `logs -l k8s-app=kube-proxy --field-selector spec.nodeName=${node}`,
          ),
          node,
          service: name,
        }),
      );
      continue;
    }
    evidence.push(
      ...tree.entries.map(
        (e) =>
          `${read.source}: ${e.from} ${e.address ?? ''}${e.address ? ' . ' : ''}${e.protocol} . ${e.port} : goto ${e.chain}`,
      ),
      ...tree.endpoints.map(
        (e) => `  ${Math.round(e.probability * 1000) / 10}% -> ${e.address ?? '?'} (${e.chain})`,
      ),
    );
    const missing = want.filter((a) => !got.includes(a));
    const stale = got.filter((a) => !want.includes(a));
    for (const a of missing)
      out.push(
        finding('endpoint-missing', 'fail', `${node}: endpoint ${a} of ${label} missing`, {
          explanation: `${a} is a ready endpoint of ${name}, but kube-proxy's nftables table on ${node} does not send to it: that node's kube-proxy has not synced since it became ready.`,
          evidence: [read.source],
          node,
          service: name,
        }),
      );
    for (const a of stale)
      out.push(
        finding(
          'endpoint-stale',
          'fail',
          `${node}: sends ${label} to ${a}, no longer an endpoint`,
          {
            explanation: `kube-proxy's nftables table on ${node} still sends ${name} to ${a}, which is not an endpoint kube-proxy should use now: those connections go to a Pod that is gone or not ready.`,
            evidence: [read.source],
            node,
            service: name,
          },
        ),
      );
    const reject = tree.verdicts.some((v) => v.kind === 'reject');
    parts.push(
      got.length > 0
        ? `${label} -> ${count(got.length, 'endpoint')}`
        : reject
          ? `${label} -> REJECT (no endpoints)`
          : `${label} -> no endpoints`,
    );
  }
  if (out.length === 0 && parts.length > 0)
    out.push(
      finding('rules-match', 'pass', `${node}: ${parts.join(', ')} in nftables, as expected`, {
        explanation: `kube-proxy's nftables table on ${node} sends ${svc.namespace}/${svc.name} to exactly the endpoints it should for the current objects.`,
        evidence,
        node,
      }),
    );
  out.push(
    finding(
      'rules-nftables-partly-observed',
      'skip',
      `${node}: nftables masquerade, node ports, firewall and rule text not compared yet`,
      {
        explanation: `In nftables mode kdebug compares the Service's entry and its endpoints; the masquerade marks, node ports, load-balancer source ranges and the exact rules kube-proxy writes are not compared with what it should write yet.`,
        next: `nft list table ip kube-proxy   (on ${node})`,
        node,
      },
    ),
  );
  return out;
}
