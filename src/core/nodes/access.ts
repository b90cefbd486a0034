// How kdebug reached each node, as a live run records it in Facts meta: which transport ran which
// commands, which were skipped and why; what one failed command says (nodes/errors.ts keeps them,
// grouped). Pure readers and wording.
import type { NodeCommand } from './commands.js';

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
  /** The command itself, from the closed list (its stem is `command`): what a reader asks of a
   * failure (was it a rules read?); older snapshots do not record it. */
  read?: NodeCommand;
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

/** What a way said on a node it could not serve: "debug Pod: debug Pod default/x: ..." says it once. */
function wayFailed(s: NodeAccess['skipped'][number]): string {
  return s.reason.startsWith(`${TRANSPORT_NAMES[s.transport]} `)
    ? s.reason
    : `${TRANSPORT_NAMES[s.transport]}: ${s.reason}`;
}

/** Why a node was not reached: what each way that tried said (the unsupported ones only if none did). */
function notReachedWhy(a: NodeAccess): string {
  const failures = a.skipped.filter((s) => !s.cannotRun);
  return [...(failures.length > 0 ? failures : a.skipped)]
    .sort((x, y) => ORDER.indexOf(x.transport) - ORDER.indexOf(y.transport))
    .map(wayFailed)
    .join('; ');
}

/**
 * One line per node: which way ran what, and why the ways before it were skipped; or, for a
 * node kdebug could not reach, what each way said.
 */
export function nodeAccessLine(a: NodeAccess): string {
  if (a.used.length === 0) {
    const why = notReachedWhy(a);
    return `${a.node}: not reached${why ? ` (${why})` : ''}`;
  }
  const skipped = [...a.skipped].sort(
    (x, y) => ORDER.indexOf(x.transport) - ORDER.indexOf(y.transport),
  );
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
 * How the nodes were reached: one line each for a few nodes, one line for those reached (how
 * many by each way) past that; the nodes not reached in one line, grouped by why.
 */
export function nodeAccessLines(access: NodeAccess[]): string[] {
  const unreached = access.filter((a) => a.used.length === 0);
  const few = access.length <= NODE_LINES;
  if (few && unreached.length <= 1) return access.map(nodeAccessLine);
  const out = few ? access.filter((a) => a.used.length > 0).map(nodeAccessLine) : [];
  if (!few) {
    const reached = new Map<string, number>();
    for (const a of access.filter((x) => x.used.length > 0)) {
      const key = [...new Set(a.used.map((u) => TRANSPORT_NAMES[u.transport]))].join(' and ');
      reached.set(key, (reached.get(key) ?? 0) + 1);
    }
    const total = access.length - unreached.length;
    if (total > 0)
      out.push(
        `${total} node${total === 1 ? '' : 's'} read (${[...reached].map(([way, n]) => `${n} through the ${way}`).join(', ')})`,
      );
  }
  if (unreached.length > 0) {
    const groups = byReason(unreached.map((a) => ({ node: a.node, reason: notReachedWhy(a) })));
    out.push(
      `${unreached.length} node${unreached.length === 1 ? '' : 's'} not reached: ${groups
        .map((g) => `${namedFew(g.nodes)} (${g.reason || 'no way to reach them'})`)
        .join('; ')}`,
    );
  }
  return out;
}

/** The words in a failure that may differ from node to node: an IPv4 or IPv6 address (never a
 * port, a time or a number: IPv6 needs "::" or all eight groups), a namespace/name. */
export const PER_NODE = new RegExp(
  [
    String.raw`(?<![\w.:])(?:\d{1,3}\.){3}\d{1,3}(?![\w.])`,
    String.raw`(?<![\w.:])(?=[0-9a-f:]*::|(?:[0-9a-f]{1,4}:){7})[0-9a-f:]{2,39}(?![\w.:])`,
    String.raw`(?<![\w./-])[a-z0-9](?:[-a-z0-9]*[a-z0-9])?/[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?`,
  ].join('|'),
  'gi',
);

/**
 * The same failure on many nodes, said once, most nodes first: the node's name is "the node", and
 * an address or a Pod that differs from node to node keeps what the nodes share and ends in "…"
 * ("kube-system/kube-proxy-…"): a thousand unreachable kubelets are one reason.
 */
export function byReason(items: { node: string; reason: string }[]): {
  reason: string;
  nodes: string[];
}[] {
  const groups = new Map<string, { nodes: string[]; texts: string[] }>();
  for (const { node, reason } of items) {
    const text = ownNameAs(reason, node, 'the node', true);
    const key = text.replace(PER_NODE, '\0');
    const g = groups.get(key) ?? (groups.set(key, { nodes: [], texts: [] }), groups.get(key)!);
    g.nodes.push(node);
    g.texts.push(text);
  }
  return [...groups.values()]
    .sort((a, b) => b.nodes.length - a.nodes.length)
    .map((g) => ({ nodes: g.nodes, reason: shared(g.texts) }));
}

/** Word characters, as a regex's \w. */
const isWord = (c: string | undefined) => c !== undefined && /\w/.test(c);

/** A node's name standing alone in a text (not inside another name: kube-proxy-NODE,
 * NODE.example.com and nodes/NODE/x stay whole) said `as`; `spoken`: quoted or not and with "node "
 * before it or not, so `node "NODE"` is "the node", never `node "the node"`. One pass over the
 * text, with no expression built per node (thousands of nodes). */
export function ownNameAs(text: string, node: string, as: string, spoken: boolean): string {
  // where a name may begin (not inside a word, an address or a path) and may end
  const startsAt = (p: number) => p === 0 || !/[\w./:-]/.test(text[p - 1]!);
  const endsAt = (e: number) =>
    !(isWord(text[e]) || text[e] === '/' || text[e] === '-') &&
    !(text[e] === '.' && isWord(text[e + 1]));
  const nameAt = (p: number) => text.startsWith(node, p);
  /** The end of the node's name said at p, in the order a person's words are tried: node "NODE",
   * "NODE", node NODE, NODE. */
  const prefixes = spoken ? ['node ', ''] : [''];
  const saidAt = (p: number): number | undefined => {
    for (const prefix of spoken ? prefixes : []) {
      const at = p + prefix.length;
      const q = text[at];
      if (text.startsWith(prefix, p) && (q === '"' || q === "'") && nameAt(at + 1)) {
        const e = at + 1 + node.length;
        if (text[e] === q && endsAt(e + 1)) return e + 1;
      }
    }
    for (const prefix of prefixes)
      if (text.startsWith(prefix, p) && nameAt(p + prefix.length)) {
        const e = p + prefix.length + node.length;
        if (endsAt(e)) return e;
      }
    return undefined;
  };
  // a name said at p holds the node's at p, p+1 ("), p+5 (node ) or p+6 (node "): only there
  const at = new Set<number>();
  for (let q = node === '' ? -1 : text.indexOf(node); q >= 0; q = text.indexOf(node, q + 1))
    for (const p of spoken ? [q - 6, q - 5, q - 1, q] : [q]) if (p >= 0) at.add(p);
  let out = '';
  let from = 0;
  for (const p of [...at].sort((a, b) => a - b)) {
    const e = p >= from && startsAt(p) ? saidAt(p) : undefined;
    if (e === undefined) continue;
    out += text.slice(from, p) + as;
    from = e;
  }
  return out + text.slice(from);
}

/** One text for many that differ only in their per-node words: each such word kept up to where
 * they part, cut back to a whole part of it ("kube-proxy-…", "198.51.100.…"). */
function shared(texts: string[]): string {
  const words = texts.map((t) => t.match(PER_NODE) ?? []);
  let i = 0;
  return texts[0]!.replace(PER_NODE, (word) => {
    const all = words.map((w) => w[i] ?? '');
    i++;
    if (all.every((w) => w === word)) return word;
    let n = 0;
    while (all.every((w) => w[n] === word[n])) n++;
    const cut = Math.max(...['-', '/', '.', ':'].map((c) => word.lastIndexOf(c, n - 1)));
    return `${word.slice(0, cut + 1)}…`;
  });
}

/** "a, b, c and 12 more". */
export function namedFew(names: string[], few = NAMED): string {
  return names.length <= few
    ? names.join(', ')
    : `${names.slice(0, few).join(', ')} and ${names.length - few} more`;
}
