// How kdebug reached each node, as a live run records it in Facts meta: which transport ran which
// commands, which were skipped and why, and the commands that failed. Pure readers and wording.
import type { Facts } from '../model.js';

export type TransportName = 'kube-proxy' | 'pod' | 'ssh' | 'cilium';

export interface NodeAccess {
  node: string;
  /** Which transport ran which commands (snapshot stems), e.g. "exec kube-system/kube-proxy-x". */
  used: { transport: TransportName; via: string; commands: string[] }[];
  /** Transports that could not serve some commands, in the order they were tried, and why. */
  skipped: {
    transport: TransportName;
    reason: string;
    commands: string[];
    /** The transport cannot run these commands anywhere (not a failure to reach the node). */
    cannotRun?: boolean;
  }[];
}

export interface NodeError {
  node: string;
  /** The stem of the command's output (`iptables-save`, `tcp-connect_10.96.0.10_53`). */
  command: string;
  /** The command as a person types it on the node (`iptables-save -t nat`), word by word; older
   * snapshots do not record it. */
  typed?: string[];
  exitCode: number | null;
  error: string;
  /** It began and did not finish (a dropped stream, a hang, a Pod gone): the run is partial. */
  lost?: boolean;
  /** Its binary was not where it ran: another binary may be (cilium before cilium-dbg). */
  missingBinary?: boolean;
}

const TRANSPORT_NAMES: Record<TransportName, string> = {
  cilium: 'Cilium agent Pod',
  'kube-proxy': 'kube-proxy Pod',
  pod: 'debug Pod',
  ssh: 'SSH',
};

/** What a command is for, in a person's words ("rules", "probes" ...). */
export function commandGroup(stem: string): string {
  // the kernel's lists under /proc/net decide which rules to read: part of reading them
  if (/^ip6?tables|^nft-|^ipvsadm-|^ipset-save$|^ip6?_tables_names$|^ip_vs_stats$/.test(stem))
    return 'rules';
  if (stem === 'proxy-mode' || stem === 'proxy-metrics' || stem === 'proxy-configz')
    return 'kube-proxy status';
  if (stem === 'ip-addr') return 'addresses';
  if (stem.startsWith('cilium-')) return 'Cilium agent listings';
  return 'probes';
}

function groups(stems: string[]): string {
  const order = ['rules', 'Cilium agent listings', 'addresses', 'kube-proxy status', 'probes'];
  const present = [...new Set(stems.map(commandGroup))].sort(
    (a, b) => order.indexOf(a) - order.indexOf(b),
  );
  return present.length <= 1
    ? (present[0] ?? '')
    : `${present.slice(0, -1).join(', ')} and ${present[present.length - 1]}`;
}

const ORDER: TransportName[] = ['cilium', 'kube-proxy', 'pod', 'ssh'];

/**
 * One line per node: which way ran what, and why the ways before it were skipped; or, for a
 * node kdebug could not reach, what each way said.
 */
export function nodeAccessLine(a: NodeAccess): string {
  const skipped = [...a.skipped].sort(
    (x, y) => ORDER.indexOf(x.transport) - ORDER.indexOf(y.transport),
  );
  if (a.used.length === 0) {
    const failures = skipped.filter((s) => !s.cannotRun);
    // "debug Pod: debug Pod default/x: ..." says it twice
    const said = (failures.length > 0 ? failures : skipped).map((s) =>
      s.reason.startsWith(`${TRANSPORT_NAMES[s.transport]} `)
        ? s.reason
        : `${TRANSPORT_NAMES[s.transport]}: ${s.reason}`,
    );
    return `${a.node}: not reached${said.length ? ` (${said.join('; ')})` : ''}`;
  }
  const used = a.used.map((u) => `${groups(u.commands)} via ${u.via}`);
  const why = skipped.map(
    (s) => `${TRANSPORT_NAMES[s.transport]} skipped for ${groups(s.commands)}: ${s.reason}`,
  );
  return `${a.node}: ${used.join('; ')}${why.length ? ` (${why.join('; ')})` : ''}`;
}

/** Past this many nodes, how they were reached is summarised, not said node by node. */
const NODE_LINES = 8;
/** Nodes named in one summary line before "and N more". */
const NAMED = 3;

/**
 * How the nodes were reached: one line each for a few nodes; for many, one line for those
 * reached (how many by each way) and one for those not reached, grouped by why.
 */
export function nodeAccessLines(access: NodeAccess[]): string[] {
  if (access.length <= NODE_LINES) return access.map(nodeAccessLine);
  const reached = new Map<string, number>();
  const unreached = new Map<string, string[]>();
  for (const a of access) {
    if (a.used.length > 0) {
      const ways = [...new Set(a.used.map((u) => TRANSPORT_NAMES[u.transport]))];
      const key = ways.join(' and ');
      reached.set(key, (reached.get(key) ?? 0) + 1);
      continue;
    }
    const failures = a.skipped.filter((s) => !s.cannotRun);
    // the same reason on each node names the node: said once for all, as "the node" (a name
    // that holds the node's, kube-proxy-NODE or NODE.example.com, stays whole)
    const name = a.node.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const own = new RegExp(`(?<![\\w.-])(?:node )?${name}(?![\\w-]|\\.\\w)`, 'g');
    const why = (failures.length > 0 ? failures : a.skipped)
      .map((s) => `${TRANSPORT_NAMES[s.transport]}: ${s.reason.replace(own, 'the node')}`)
      .join('; ');
    unreached.set(why, [...(unreached.get(why) ?? []), a.node]);
  }
  const total = [...reached.values()].reduce((n, k) => n + k, 0);
  const out: string[] = [];
  if (total > 0)
    out.push(
      `${total} node${total === 1 ? '' : 's'} read (${[...reached].map(([way, n]) => `${n} through the ${way}`).join(', ')})`,
    );
  const missed = [...unreached.values()].reduce((n, k) => n + k.length, 0);
  if (missed > 0)
    out.push(
      `${missed} node${missed === 1 ? '' : 's'} not reached: ${[...unreached]
        .sort((a, b) => b[1].length - a[1].length)
        .map(([why, nodes]) => `${namedFew(nodes)} (${why || 'no way to reach them'})`)
        .join('; ')}`,
    );
  return out;
}

/** "a, b, c and 12 more". */
export function namedFew(names: string[], few = NAMED): string {
  return names.length <= few
    ? names.join(', ')
    : `${names.slice(0, few).join(', ')} and ${names.length - few} more`;
}

/** The node commands that failed in a capture (meta.nodeErrors). */
export function nodeErrorsOf(facts: Facts): NodeError[] {
  const v = facts.meta['nodeErrors'];
  // a snapshot's meta.json is input: an entry without its words is no error kdebug can show
  return Array.isArray(v) ? (v as unknown[]).filter(isNodeError) : [];
}

function isNodeError(v: unknown): v is NodeError {
  if (v === null || typeof v !== 'object') return false;
  const e = v as Record<string, unknown>;
  return (
    typeof e['node'] === 'string' &&
    typeof e['command'] === 'string' &&
    typeof e['error'] === 'string' &&
    (e['typed'] === undefined ||
      (Array.isArray(e['typed']) && e['typed'].every((w) => typeof w === 'string')))
  );
}

/** Why a node's rules were not read, when the capture tried and failed. */
export function rulesReadError(facts: Facts, node: string): string | undefined {
  return nodeErrorsOf(facts).find((e) => e.node === node && RULES_READ.test(e.command))?.error;
}

/** The reads of a node's IPv4 rules: the dump, one backend's, or a chain by name. */
const RULES_READ = /^iptables(?:-legacy|-nft)?-(?:save|(?:nat|filter)-S_.*)$/;
