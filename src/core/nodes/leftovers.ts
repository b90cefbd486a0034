// The other proxy mode's kube-proxy rules a node still holds beside its live mode's: iptables
// chains on a node in nftables mode, kube-proxy's nftables table on a node in iptables or IPVS
// mode. kube-proxy removes them only when it starts in the other mode (cmd/kube-proxy/app
// platformCleanup: nftables mode deletes the iptables and IPVS state, iptables and IPVS modes the
// nftables table, v1.30 only with the NFTablesProxyMode gate on) or under `kube-proxy --cleanup`,
// best-effort: a failure there, or a proxy that replaced kube-proxy without it, leaves them. Both
// hook nat prerouting and output at dstnat (-100), so hooked ones still DNAT some connections.
import { driftFinding, lineAt, type DriftFinding } from '../dataplane/drift.js';
import type { IptablesDataplane, NftablesDataplane } from '../dataplane/dataplane.js';
import type { ServiceTree, ServiceTrees } from '../dataplane/trees.js';
import type { NextCommand } from '../findings/next-command.js';
import type { Severity } from '../model.js';

/** The other mode's state as read on the node, and its Service trees. */
export interface OtherModeState {
  dataplane: IptablesDataplane | NftablesDataplane;
  trees: ServiceTrees;
}

/** A place where netfilter runs the leftover's rules: its line in the listing, where it has one. */
interface Hook {
  text: string;
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
      .map((id) => ({ text: nat.text(id), line: nat.line(id) })),
  );
}

/** kube-proxy's table's nat base chains at prerouting or output: where its DNATs run. */
function nftHooks(d: NftablesDataplane): Hook[] {
  return d.table.chains
    .filter((c) => c.type === 'nat' && (c.hook === 'prerouting' || c.hook === 'output'))
    .map((c) => ({
      text: `chain ${c.name} { type nat hook ${c.hook} priority ${c.prio ?? DSTNAT}; }`,
    }));
}

/** A stale endpoint as the listing holds it: its iptables-save line, else its nft chain. */
function staleText(d: OtherModeState['dataplane'], s: Stale): string {
  if (d.mode === 'iptables' && s.line !== undefined)
    for (const t of d.ruleset.tables) {
      const id = t.ruleAtLine(s.line);
      if (id >= 0) return t.text(id);
    }
  return `chain ${s.chain}`;
}

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

const MODE_NOUN = { iptables: 'iptables-mode rules', nftables: 'nftables table' } as const;

/**
 * The other mode's kube-proxy state the node holds beside its `live` mode, as one drift finding
 * (undefined where it holds none): which mode's, how many Service ports it covers, whether it is
 * hooked (error where it still DNATs to addresses that are no current endpoint, warning where
 * not, information where nothing enters it) and the stale addresses it sends to.
 */
export function leftoverFinding(
  node: string,
  live: string,
  other: OtherModeState,
  /** Each Service port's current endpoints ("10.244.1.2:80"), as kube-proxy would take them. */
  current: ReadonlyMap<string, ReadonlySet<string>>,
  next: NextCommand | undefined,
): DriftFinding | undefined {
  const { dataplane: d, trees } = other;
  const services = trees.services.filter((t) => t.endpoints.length > 0 || t.entries.length > 0);
  const orphans = trees.orphans.length;
  if (services.length === 0 && orphans === 0) return undefined;
  const hooks = d.mode === 'iptables' ? iptablesHooks(d) : nftHooks(d);
  const stale = services.flatMap((t) => staleOf(t, current));
  const severity: Severity = hooks.length === 0 ? 'info' : stale.length > 0 ? 'error' : 'warning';
  const ports = new Set(services.map((t) => t.name ?? t.id));
  const named = new Set(services.flatMap((t) => (t.name ? [t.name.replace(/:[^:]*$/, '')] : [])));
  const what = `kube-proxy's ${MODE_NOUN[d.mode]}`;
  const cover = `${ports.size} Service port${ports.size === 1 ? '' : 's'} of ${named.size} Service${named.size === 1 ? '' : 's'}${orphans > 0 ? `, ${orphans} chain${orphans === 1 ? '' : 's'} no entry reaches` : ''}`;
  const staleSaid =
    stale.length > 0
      ? ` ${stale.length} of their endpoint${stale.length === 1 ? '' : 's'} ${stale.length === 1 ? 'is' : 'are'} no current endpoint of ${stale.length === 1 ? 'its' : 'their'} Service port (${stale
          .slice(0, 3)
          .map((s) => `${s.address} for ${s.service}`)
          .join(
            ', ',
          )}${stale.length > 3 ? ', ...' : ''}): connections that take them reach stale Pods or nothing.`
      : ' Their endpoints are the current ones, so they route as the live rules do today, and go stale on the next endpoint change.';
  const act =
    hooks.length === 0
      ? ` Nothing enters them (no jump from a nat base chain), so they act on no packet.${staleSaid.replace(/ connections that.*$/, '')}`
      : ` They are hooked (${hooks.length} entr${hooks.length === 1 ? 'y' : 'ies'}) at nat prerouting and output at priority ${DSTNAT}, as the ${live} mode's rules are: for each new connection the nat chain the kernel runs first does the DNAT, so some connections take them.${staleSaid}`;
  const actual = [
    ...hooks.map((h) => lineAt(d.source, h.line, h.text)),
    ...stale.slice(0, 8).map((s) => lineAt(d.source, s.line, staleText(d, s))),
  ];
  return driftFinding(
    'other-mode-leftover',
    {
      title: `${d.mode} mode's rules left beside ${live} mode: ${cover}`,
      message: `node ${node} runs kube-proxy in ${live} mode, yet still holds ${what} (${cover}) in ${d.source}.${act} kube-proxy deletes the other mode's rules only when it starts (nftables mode deletes the iptables and IPVS ones; iptables and IPVS modes the nftables table, v1.30 only with the NFTablesProxyMode gate on), best-effort: these stayed.`,
      actual,
      actualAt: { source: d.source },
      ...(next ? { next } : {}),
      advice: `Run kube-proxy's own cleanup (\`kube-proxy --cleanup\`, on v1.30 with --feature-gates=NFTablesProxyMode=true for the nftables table): it removes every mode's rules, the live ones too, so restart kube-proxy right after (delete its Pod) and it writes its own again.`,
    },
    { node, source: d.source },
    severity,
  );
}
