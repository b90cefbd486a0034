// The other proxy mode's kube-proxy state a node still holds beside its live mode's: iptables
// chains on a node in nftables mode, kube-proxy's nftables table on a node in iptables or IPVS
// mode, IPVS virtual servers on a node in iptables or nftables mode. kube-proxy removes them only
// when it starts in another mode (cmd/kube-proxy/app platformCleanup: nftables mode deletes the
// iptables and IPVS state, iptables and IPVS modes the nftables table, v1.30 only with the
// NFTablesProxyMode gate on; iptables and IPVS modes never each other's) or under
// `kube-proxy --cleanup`, best-effort: a failure there, or a proxy that replaced kube-proxy
// without it, leaves them. iptables' and nftables' nat chains both hook prerouting and output at
// dstnat (-100), so hooked ones still DNAT some connections; IPVS runs after them (local-in and
// local-out, ip_vs_core.c), on what they leave addressed to a virtual server.
import { driftFinding, lineAt, type DriftFinding } from '../dataplane/drift.js';
import { seen } from '../findings/evidence.js';
import { count } from '../checks/check.js';
import type {
  IptablesDataplane,
  IpvsDataplane,
  NftablesDataplane,
} from '../dataplane/dataplane.js';
import type { ServiceTree, ServiceTrees } from '../dataplane/trees.js';
import type { NextCommand } from '../findings/next-command.js';
import type { Severity } from '../model.js';

/** The other mode's state as read on the node, and its Service trees. */
export interface OtherModeState {
  dataplane: IptablesDataplane | NftablesDataplane | IpvsDataplane;
  trees: ServiceTrees;
  /** The listing's lines (its text split), where its rows have lines: what evidence quotes. */
  lines?: readonly string[];
  /** IPVS: where kube-ipvs0's addresses were read (`ip -br addr`); undefined: not read. */
  boundSource?: string;
}

/** A place where netfilter runs the leftover's rules: its line in the listing, where it has one. */
interface Hook {
  text: string;
  source: string;
  line?: number;
}

/** An address a leftover DNATs a Service port to that is not one of its current endpoints. */
interface Stale {
  service: string;
  address: string;
  /** The endpoint's chain, as the listing names it. */
  chain: string;
  /** Its line in the listing; none in nft's JSON, one line. */
  line?: number;
}

// iptables' nat PREROUTING and OUTPUT run at NF_IP_PRI_NAT_DST, kube-proxy's nftables nat chains
// at dstnat: the same priority, so which DNATs a new connection first is not in either listing
const DSTNAT = -100;

/** Where kube-proxy's iptables-mode rules are entered: nat PREROUTING and OUTPUT jumping to
 * KUBE-SERVICES (iptables.CleanupLeftovers deletes exactly these jumps first). */
function iptablesHooks(d: IptablesDataplane): Hook[] {
  const nat = d.ruleset.table('nat');
  if (!nat) return [];
  return ['PREROUTING', 'OUTPUT'].flatMap((name) =>
    (nat.chain(name)?.ruleIds ?? [])
      .filter((id) => nat.target(id) === 'KUBE-SERVICES')
      .map((id) => ({ text: nat.text(id), source: d.source, line: nat.line(id) })),
  );
}

/** kube-proxy's table's nat base chains at prerouting or output: where its DNATs run. */
function nftHooks(d: NftablesDataplane): Hook[] {
  return d.table.chains
    .filter((c) => c.type === 'nat' && (c.hook === 'prerouting' || c.hook === 'output'))
    .map((c) => ({
      text: `chain ${c.name} { type nat hook ${c.hook} priority ${c.prio ?? DSTNAT}; }`,
      source: d.source,
    }));
}

/** The virtual servers' addresses kube-ipvs0 holds, as one hook: the node takes connections to
 * them as its own (local-in), where IPVS balances them; none where kube-ipvs0 was not read. */
function ipvsHooks(d: IpvsDataplane, boundSource: string | undefined): Hook[] {
  if (!d.bound || boundSource === undefined) return [];
  // "10.96.0.10:53", "[fd00::a]:53": the host, as kube-ipvs0 holds it
  const hosts = new Set(
    d.table.services.map((v) => v.address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1')),
  );
  const held = [...d.bound].filter((a) => hosts.has(a));
  if (held.length === 0) return [];
  const some = held.slice(0, 4).join(', ') + (held.length > 4 ? ', ...' : '');
  return [
    {
      text: `kube-ipvs0 holds ${count(held.length, 'virtual server address', 'virtual server addresses')}: ${some}`,
      source: boundSource,
    },
  ];
}

/** A stale endpoint as the listing holds it: its line, else (nft's JSON) its chain's name. */
const staleText = (o: OtherModeState, s: Stale) =>
  (s.line !== undefined ? o.lines?.[s.line - 1]?.trim() : undefined) ?? `chain ${s.chain}`;

/** The endpoints a leftover tree sends to that are not its Service port's current endpoints. */
function staleOf(t: ServiceTree, current: ReadonlyMap<string, ReadonlySet<string>>): Stale[] {
  const now = (t.name && current.get(t.name)) || new Set<string>();
  const service = t.name ?? t.id;
  return [...t.endpoints, ...(t.localEndpoints ?? [])]
    .filter((e) => e.address !== undefined && !now.has(e.address))
    .map((e) => ({
      service,
      address: e.address!,
      chain: e.chain,
      ...(e.line > 0 ? { line: e.line } : {}),
    }));
}

const MODE_NOUN = {
  iptables: 'iptables-mode rules',
  nftables: 'nftables table',
  ipvs: 'IPVS virtual servers',
} as const;

/** Where and when the leftover acts, by its mode and its hooks. */
function actsText(mode: OtherModeState['dataplane']['mode'], live: string, hooks: Hook[]): string {
  if (mode === 'ipvs')
    return hooks.length > 0
      ? `IPVS runs after the ${live} mode's nat chains (local-in, local-out): it balances the connections they leave addressed to a virtual server (a Service they no longer have, one they do not DNAT), and kube-ipvs0 still holds their addresses, so the node takes connections to them as its own.`
      : `IPVS runs after the ${live} mode's nat chains: it balances only connections they leave addressed to a virtual server, sent from the node itself (kube-ipvs0 holds none of their addresses, or was not read).`;
  return hooks.length > 0
    ? `They are hooked (${count(hooks.length, 'entry', 'entries')}) at nat prerouting and output at priority ${DSTNAT}, as the ${live} mode's rules are: for each new connection the nat chain the kernel runs first does the DNAT, so some connections take them.`
    : 'Nothing enters them (no jump from a nat base chain), so they act on no packet.';
}

/** What the leftover's endpoints are to the Service ports' current ones. */
function endpointsText(stale: Stale[], acts: boolean): string {
  if (stale.length === 0)
    return 'Their endpoints are the current ones: they go stale on the next endpoint change.';
  const some = stale
    .slice(0, 3)
    .map((s) => `${s.address} for ${s.service}`)
    .join(', ');
  return `${count(stale.length, 'of their endpoints is', 'of their endpoints are')} no current endpoint of its Service port (${some}${stale.length > 3 ? ', ...' : ''})${acts ? ': connections that take them reach stale Pods or nothing' : ''}.`;
}

/** What a leftover holds and does: the Service ports it covers, where netfilter enters it, the
 * stale endpoints it sends to, and its lines as evidence; undefined where it holds nothing. */
function assess(other: OtherModeState, current: ReadonlyMap<string, ReadonlySet<string>>) {
  const { dataplane: d, trees } = other;
  const services = trees.services.filter((t) => t.endpoints.length > 0 || t.entries.length > 0);
  const orphans = trees.orphans.length;
  if (services.length === 0 && orphans === 0) return undefined;
  const hooks =
    d.mode === 'iptables'
      ? iptablesHooks(d)
      : d.mode === 'nftables'
        ? nftHooks(d)
        : ipvsHooks(d, other.boundSource);
  // IPVS is hooked by the kernel wherever it has virtual servers; it acts after the live rules
  const acts = d.mode === 'ipvs' || hooks.length > 0;
  const stale = services.flatMap((t) => staleOf(t, current));
  const ports = new Set(services.map((t) => t.name ?? t.id));
  const named = new Set(services.flatMap((t) => (t.name ? [t.name.replace(/:[^:]*$/, '')] : [])));
  const cover = `${count(ports.size, 'Service port')} of ${count(named.size, 'Service')}${orphans > 0 ? `, ${count(orphans, 'chain')} no entry reaches` : ''}`;
  // a hook read from another output (kube-ipvs0's addresses) is evidence of that file's
  const elsewhere = hooks.filter((h) => h.source !== d.source);
  const actual = [
    ...hooks.filter((h) => h.source === d.source).map((h) => lineAt(h.source, h.line, h.text)),
    ...stale.slice(0, 8).map((s) => lineAt(d.source, s.line, staleText(other, s))),
  ];
  return { d, hooks, acts, stale, cover, elsewhere, actual };
}

/**
 * The other mode's kube-proxy state the node holds beside its `live` mode, as one drift finding
 * (undefined where it holds none): which mode's, how many Service ports it covers, whether it
 * acts on packets and the stale endpoints it sends to. Severity: error where iptables or nftables
 * leftovers are hooked beside the live rules and send to stale endpoints, warning where they are
 * hooked with current ones or are IPVS's (after the live rules), information where nothing
 * enters them.
 */
export function leftoverFinding(
  node: string,
  live: string,
  other: OtherModeState,
  /** Each Service port's current endpoints ("10.244.1.2:80"), as kube-proxy would take them. */
  current: ReadonlyMap<string, ReadonlySet<string>>,
  next: NextCommand | undefined,
): DriftFinding | undefined {
  const a = assess(other, current);
  if (!a) return undefined;
  const { d, hooks, acts, stale, cover } = a;
  const severity: Severity = !acts
    ? 'info'
    : d.mode !== 'ipvs' && stale.length > 0
      ? 'error'
      : 'warning';
  return driftFinding(
    'other-mode-leftover',
    {
      title: `${d.mode} mode's state left beside ${live} mode: ${cover}`,
      message: `node ${node} runs kube-proxy in ${live} mode, yet still holds kube-proxy's ${MODE_NOUN[d.mode]} (${cover}) in ${d.source}. ${actsText(d.mode, live, hooks)} ${endpointsText(stale, acts)} kube-proxy deletes another mode's state only when it starts (nftables mode deletes the iptables and IPVS ones; iptables and IPVS modes the nftables table, v1.30 only with the NFTablesProxyMode gate on; neither of those two the other's), best-effort: these stayed.`,
      actual: a.actual,
      actualAt: { source: d.source },
      evidence: a.elsewhere.map((h) => seen(h.text, { node, source: h.source })),
      ...(next ? { next } : {}),
      advice: `Run kube-proxy's own cleanup (\`kube-proxy --cleanup\`, on v1.30 with --feature-gates=NFTablesProxyMode=true for the nftables table): it removes every mode's state, the live one's too, so restart kube-proxy right after (delete its Pod) and it writes its own again.`,
    },
    { node, source: d.source },
    severity,
  );
}

/** The Cilium agent that replaces kube-proxy on a node, as the finding beside it names it. */
export interface ReplacingAgent {
  /** "agent kube-system/cilium-x". */
  name: string;
  /** Its replacement in words: "full kube-proxy replacement", or a partial one's. */
  replacement: string;
  /** Where its replacement was read: "the "KubeProxyReplacement" line of ...". */
  source: string;
  /** kube-proxy's Pod on the node, "kube-system/kube-proxy-x", where one runs there. */
  kubeProxyPod?: string;
}

/**
 * kube-proxy's state on a node whose Cilium agent does a full kube-proxy replacement, as one
 * drift finding (undefined where it holds none). The agent takes every packet to a frontend it
 * holds before netfilter does (its socket LB, which the replacement forces on, for Pods and the
 * host; its programs at a Pod's device and at the node's devices), so kube-proxy's rules meet
 * only packets to an address and port the agent holds no frontend for. Severity: warning where
 * they are hooked (they then answer for what the agent lacks, to stale Pods perhaps), information
 * where nothing enters them.
 */
export function kubeProxyBesideCilium(
  node: string,
  agent: ReplacingAgent,
  other: OtherModeState,
  current: ReadonlyMap<string, ReadonlySet<string>>,
  next: NextCommand | undefined,
): DriftFinding | undefined {
  const a = assess(other, current);
  if (!a) return undefined;
  const { d, hooks, acts, stale, cover } = a;
  const who = agent.kubeProxyPod
    ? `kube-proxy's Pod ${agent.kubeProxyPod} runs there and keeps them written`
    : 'no kube-proxy Pod runs there: they were left from before the replacement';
  const entered =
    d.mode === 'ipvs'
      ? `IPVS balances what reaches a virtual server's address${hooks.length > 0 ? ' (kube-ipvs0 still holds them, so the node takes those connections as its own)' : ''}`
      : hooks.length > 0
        ? `They are hooked (${count(hooks.length, 'entry', 'entries')} at nat prerouting and output)`
        : 'Nothing enters them (no jump from a nat base chain), so they act on no packet';
  const onlyWhat = acts
    ? `: they translate only what the agent passes, a packet to a Service address and port it holds no frontend for (its cilium-frontend-missing findings), which kube-proxy's rules then translate to their own endpoints.`
    : '.';
  return driftFinding(
    'cilium-kube-proxy-rules',
    {
      title: `kube-proxy's ${MODE_NOUN[d.mode]} beside Cilium's kube-proxy replacement: ${cover}`,
      message: `Cilium's ${agent.name} runs a ${agent.replacement} on ${node} (from ${agent.source}), yet the node holds kube-proxy's ${MODE_NOUN[d.mode]} (${cover}) in ${d.source}, and ${who}. The agent's table is what is compared here: it takes each packet to a frontend it holds before netfilter does, at the socket for Pods and the host (socket LB, which the replacement turns on) or at a Pod's device, and at the node's devices for traffic from outside. ${entered}${onlyWhat} ${endpointsText(stale, acts)}`,
      actual: a.actual,
      actualAt: { source: d.source },
      evidence: a.elsewhere.map((h) => seen(h.text, { node, source: h.source })),
      ...(next ? { next } : {}),
      advice: agent.kubeProxyPod
        ? `Cilium's guide removes kube-proxy where its agent replaces it: delete kube-proxy's DaemonSet (and its ConfigMap), then its rules on each node (\`kube-proxy --cleanup\`, or the guide's \`iptables-save | grep -v KUBE | iptables-restore\`); Cilium's agent says "kube-proxy should not be running" where kube-proxy holds the healthz address it would serve.`
        : `Remove what kube-proxy left: \`kube-proxy --cleanup\` on the node (Cilium's guide: \`iptables-save | grep -v KUBE | iptables-restore\`); the agent's own state is not kube-proxy's and stays.`,
    },
    { node, source: d.source },
    acts ? 'warning' : 'info',
  );
}
