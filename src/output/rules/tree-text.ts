// A Service tree as `kdebug rules` prints it: its entry points, its endpoints with their shares
// and DNAT targets, masquerade and verdict rules, indented under the Service.
import { portNameText, percent } from '../../core/model.js';
import {
  ENTRY_KIND_TEXT,
  type EntryPoint,
  type MasqueradeRule,
  type ServiceTree,
  type TreeEndpoint,
} from '../../core/dataplane/trees.js';
import { hostPort } from '../../core/ipv6.js';
import type { Held } from './no-service.js';

function entryText(e: EntryPoint): string {
  const kind = e.label ?? ENTRY_KIND_TEXT[e.kind];
  if (e.from === 'cilium') {
    const protocol = e.protocol ? `/${e.protocol}` : '';
    const where = e.address
      ? `${hostPort(e.address, e.port ?? 0)}${protocol}`
      : `${e.port}${protocol} on every node address`;
    const scope = e.scope ? ' (internal scope: traffic from inside the cluster)' : '';
    const to = e.l7Proxy
      ? `  -> ${l7ProxyText(e.l7Proxy)}`
      : e.redirect
        ? `  -> redirected by ${e.redirect.policy ? `Local Redirect Policy ${e.redirect.policy}` : 'a Local Redirect Policy'} to its Pods on this node, not the Service's endpoints`
        : '';
    const status = e.status === undefined ? '' : `, status ${e.status}`;
    return `${kind} ${where}${scope}  (cilium line ${e.line}${status})${to}`;
  }
  // an IPVS firewall-mark service: its mark alone, said in its label
  if (e.from === 'ipvs' && e.address === undefined && e.port === undefined)
    return `${kind}  (ipvs line ${e.line} -> ${e.chain})`;
  // kube-proxy writes a port on every Service entry: a rule without one lost it in printing
  // a template's placeholder stands where the author left the value out
  const port = e.port ?? e.placeholder?.port ?? (e.from === 'ipvs' ? 'port unknown' : '?');
  const protocol = e.protocol ? `/${e.protocol}` : '';
  // a node port rule or virtual server for one address: said with it (kube-proxy's localhost one)
  const on = e.kind === 'node-port' && e.address !== undefined;
  const where =
    e.kind === 'node-port'
      ? `${kind} ${port}${on ? `${protocol} on ${nodePortAddress(e)}` : ''}`
      : `${kind} ${hostPort(e.address ?? e.placeholder?.address ?? '', port)}`;
  if (e.proxyPort !== undefined)
    return `${where}${on ? '' : protocol}  (${e.from} line ${e.line}) proxied by kube-proxy itself on port ${e.proxyPort} (userspace mode: endpoints are not in iptables)`;
  const proto = on ? '' : protocol;
  const unshown =
    e.port === undefined && e.placeholder?.port === undefined && e.from !== 'ipvs'
      ? ' (port not shown)'
      : '';
  return `${where}${proto}${unshown}  (${e.from} ${e.line ? `line ${e.line} ` : ''}-> ${e.chain})`;
}

/** The address a node port entry takes, and where it is the node's loopback, what kube-proxy
 * means by it (EntryPoint.localhost). */
const nodePortAddress = (e: EntryPoint) =>
  e.localhost
    ? `${e.address!} (localhost: the node port reached on the node's loopback addresses)`
    : e.address!;

/** A masquerade rule's condition, and where kube-proxy writes it for one case, what it means. */
const MASQUERADE_WHY: Record<NonNullable<MasqueradeRule['why']>, string> = {
  'localhost-clients':
    "clients on the node's loopback: their replies must come back through it, not from the Pod",
  'node-local':
    'traffic sent from the node itself: its own addresses, host processes and hostNetwork Pods',
};
const masqueradeText = (m: MasqueradeRule) =>
  m.why ? `${m.condition} (${MASQUERADE_WHY[m.why]})` : m.condition;

/** Where an l7-load-balancer frontend's connections go. */
const l7ProxyText = (p: NonNullable<EntryPoint['l7Proxy']>) =>
  `Cilium's L7 proxy (Envoy) on this node${p.port ? `, port ${p.port}` : ' (its port not in this listing)'}`;

function endpointText(ep: TreeEndpoint, held: Held): string {
  if (ep.cilium) {
    const share = ep.shareUnknown ? '?' : percent(ep.probability);
    const { weight, maglev } = ep.cilium;
    const state = `${ep.cilium.state ?? 'state not in the listing'}${ep.cilium.preferred === undefined ? '' : ep.cilium.preferred ? ', preferred' : ', not preferred'}${weight === undefined ? '' : `, weight ${weight}`}${maglev ? `, ${maglev.entries} of ${maglev.of} Maglev entries` : ''}`;
    return `${share.padStart(6)}  backend ${ep.address}  (${state}${ep.probability === 0 && !ep.shareUnknown ? ': no new connections' : ''})`;
  }
  const share = ep.shareUnknown
    ? '?'
    : ep.affinity && ep.probability === 0
      ? 'affinity'
      : percent(ep.probability);
  let to = ep.addressFromComment
    ? `DNAT -> ${ep.address} (from kube-proxy's comment on the jump: ${ep.chainMissing ? `chain not in this ${held}` : 'its DNAT rule does not print it'})`
    : ep.address
      ? ep.forward === 'unknown'
        ? `-> ${ep.address} (forwarding method not in this view: NAT, direct routing or IP-in-IP)`
        : ep.forward
          ? `${ep.forward === 'route' ? 'direct routing (Route)' : 'IP-in-IP (Tunnel)'}, no DNAT -> ${ep.address}`
          : `DNAT -> ${ep.portUnknown ? hostPort(ep.address, 'port unknown') : ep.address}`
      : ep.inferredIP
        ? `DNAT -> ${ep.inferredIP}:? (address unreadable, IP from the hairpin rule)`
        : ep.hostStart
          ? `DNAT -> a host whose name starts ${ep.hostStart} (cut), port unknown`
          : 'no DNAT rule';
  // an nft endpoint chain's name carries its endpoint (servicePortEndpointChainNameBase)
  if (ep.addressFromName)
    to = `DNAT -> ${ep.address} (from the name kube-proxy gave its endpoint chain: chain not in this ${held})`;
  else if (ep.chainMissing && !ep.addressFromComment)
    to = `chain not in this ${held}: DNAT target unknown`;
  else if (ep.chainPartial && !ep.address && !ep.inferredIP)
    to = `DNAT target not in the ${held} (its chain: ${ep.chainPartial})`;
  const marks = [
    ep.shareUnknown ? `share unknown: ${ep.shareUnknown}` : '',
    // what the rule says of the connections that reach it, no share of the Service's
    ep.shareUnknown && ep.ruleProbability !== undefined
      ? `its rule's --probability ${ep.ruleProbability}: of the connections that reach it`
      : '',
    ep.portUnknown ? `port unknown: ${ep.portUnknown}` : '',
    ep.hairpinMasquerade === null
      ? 'hairpin rule unknown'
      : ep.hairpinMasquerade
        ? 'hairpin masquerade'
        : 'NO hairpin masquerade',
    ep.affinity ? 'session affinity' : '',
  ].filter(Boolean);
  return `${share.padStart(6)}  ${ep.chain}  ${to}  (${marks.join(', ')})`;
}

/** A tree's heading where nothing names its Service port: its own chain's name, as any chain
 * without a comment is named (its id is the chain's hash alone). */
const unnamedHead = (t: ServiceTree): string => {
  const own = t.chains.svc ?? t.chains.svl ?? t.chains.ext ?? t.chains.fw ?? t.chains.xlb;
  return !t.clusterIP && t.hash && own ? `${own}${t.protocol ? `/${t.protocol}` : ''}` : t.id;
};

export function treeText(t: ServiceTree, held: Held): string[] {
  const head = [t.name ? portNameText(t.name) : unnamedHead(t)];
  if (t.name && t.clusterIP)
    head.push(
      `${hostPort(t.clusterIP, t.port ?? '?')}${t.protocol ? `/${t.protocol}` : ''}${t.port === undefined ? ' (port not shown)' : ''}`,
    );
  if (t.nodePorts.length > 0 && t.name) head.push(`node port ${t.nodePorts.join(', ')}`);
  if (t.family) head.push(`(${t.family})`);
  const out = [head.join('  ')];
  if (t.entryAbsent)
    out.push(
      `  entry not in this ${held} (${t.chains.svc && !t.chains.svc.startsWith('KUBE-') ? 'no service-ips element for it' : 'no KUBE-SERVICES rules in it'})`,
    );
  for (const e of t.entries) out.push(`  entry  ${entryText(e)}`);
  for (const c of t.absentChains ?? [])
    out.push(`  ${c}  (chain not in this ${held}: its endpoints are unknown)`);
  for (const m of t.masquerade)
    out.push(`  masquerade  ${masqueradeText(m)}  (${m.chain}${m.line ? ` line ${m.line}` : ''})`);
  for (const v of t.verdicts)
    out.push(
      `  ${v.kind.toUpperCase()}  ${v.comment ?? ''}${v.condition ? `  ${v.condition}` : ''}  (${[v.table, v.chain].filter(Boolean).join(' ')}${v.line ? ` line ${v.line}` : ''})${strayVerdict(t, v) ? '  ! stale: the same address and port also lead to endpoints (kube-proxy writes it only for a port without them)' : ''}`,
    );
  // an l7-load-balancer frontend's backends are not where the datapath sends its connections
  const proxied = t.l7Proxy;
  const list = (title: string | undefined, eps: TreeEndpoint[], empty = 'no endpoints') => {
    if (!title) return;
    const none = proxied
      ? `  (new connections go to ${l7ProxyText(proxied)}, not to a backend of the map: Envoy's own configuration, not in this listing, picks the upstream)`
      : t.partial
        ? `  (the ${held} may not hold all its rules: ${t.partial})`
        : eps.length === 0
          ? `  (${empty})`
          : '';
    out.push(`  ${title}${none}`);
    eps.forEach((ep, i) =>
      out.push(`  ${i === eps.length - 1 ? '└─' : '├─'}${endpointText(ep, held)}`),
    );
  };
  // Cilium's frontends have no chains: their backends are the frontend's own
  const cilium = t.entries.some((e) => e.from === 'cilium');
  list(cilium ? 'backends' : t.chains.svc, t.endpoints);
  list(t.chains.svl ?? t.chains.xlb, t.localEndpoints ?? [], 'no local endpoints');
  if (t.fallThrough > 0 && !t.partial)
    out.push(
      // kube-proxy's last endpoint rule has no probability and takes the rest: here it is not
      `  ${percent(t.fallThrough)} of new connections match none of the endpoint rules shown: kube-proxy ends this chain with a rule that takes the rest, and it is not here (the listing is cut or filtered, or the chain was edited)`,
    );
  if (t.affinitySeconds !== undefined)
    out.push(`  session affinity: ClientIP, ${t.affinitySeconds}s`);
  // a quirk of the virtual server is every real server's: said once
  const quirks = new Set([...t.endpoints, ...(t.localEndpoints ?? [])].map((ep) => ep.quirk));
  for (const quirk of quirks) if (quirk) out.push(`  note: ${quirk}`);
  return out;
}

/** A no-endpoint verdict for an address and port the tree also sends to its endpoints. */
const strayVerdict = (t: ServiceTree, v: ServiceTree['verdicts'][number]) =>
  v.kind === 'reject' &&
  v.address !== undefined &&
  t.entries.some((e) => e.address === v.address && e.port === v.port) &&
  t.endpoints.length > 0;
