// A rule in kube-proxy's shared chains that kube-proxy would not write, judged by where it sends
// packets, not by how it reads: each Service port whose frontend it may match is walked through
// kube-proxy's rules without it and with it at its place, and one whose packets end elsewhere is
// caught (what else differs on the node plays no part).
import type { DriftContext } from '../context.js';
import type { ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import { parseIptables, type Ruleset, type Table } from '../../read/parse.js';
import { expectedSave } from '../../../kube-proxy/expected.js';
import { RuleFlag } from '../../read/token-walk.js';
import { cidrHolds, hostCidr } from '../../../../ipv6.js';
import { iptablesDelete } from '../../../../findings/next-command.js';
import { behaviourDiffers, outcomeText, type BehaviourDiff } from './behaviour.js';

/** A rule of the node's dump: its table and its id there. */
export interface ExtraRule {
  table: Table;
  id: number;
}

/** Caught ports named in words; the rest are counted. */
const NAMED = 3;

/** Adds a finding for each extra rule that changes where some Service port's packets go (their
 * names added to `flagged`); returns the rules that caught a port. */
export function caughtByExtraRules(
  c: DriftContext,
  extra: ExtraRule[],
  flagged: Set<string>,
): Set<ExtraRule> {
  const caught = new Set<ExtraRule>();
  if (extra.length === 0) return caught;
  // the rule is judged in kube-proxy's own rules, where nothing else differs: each port's packets
  // walked without it and with it before or after the port's own rules, as on the node
  const tables = (['filter', 'nat'] as const).filter((t) => c.actual.table(t));
  const save = expectedSave(c.exp, { header: false, tables });
  let without: Ruleset | undefined;
  for (const rule of extra) {
    const { table, id } = rule;
    const candidates = c.exp.servicePorts.filter((x) => mayMatch(table, id, x, c.exp.node.ips));
    if (candidates.length === 0) continue;
    const before = beforePort(table, id);
    const placed = new Map<boolean, Ruleset | undefined>();
    const ports: [ExpectedServicePort, BehaviourDiff[]][] = [];
    for (const sp of candidates) {
      const first = before(sp);
      if (!placed.has(first)) placed.set(first, withLine(save, table, id, first));
      const withRule = placed.get(first);
      if (!withRule) continue;
      const walks = behaviourDiffers(c.exp, (without ??= parseIptables(save)), withRule, sp);
      if (walks.length > 0) ports.push([sp, walks]);
    }
    if (ports.length === 0) continue;
    caught.add(rule);
    for (const [sp] of ports) flagged.add(sp.name);
    report(c, rule, ports);
  }
  return caught;
}

/** One finding for a rule that catches `ports`: an error where kube-proxy would DNAT some of
 * their packets (they no longer reach the endpoints), else a warning (no longer refused). */
function report(
  c: DriftContext,
  { table, id }: ExtraRule,
  ports: [ExpectedServicePort, BehaviourDiff[]][],
): void {
  const diverted = ports.some(([, ws]) =>
    ws.some((w) => w.wanted.some((o) => o.dnat !== undefined && !o.refused)),
  );
  const names = ports.map(([sp]) => sp.name);
  const named = `${names.slice(0, NAMED).join(', ')}${names.length > NAMED ? ` and ${names.length - NAMED} more` : ''}`;
  const [sp, [w]] = ports[0]! as [ExpectedServicePort, [BehaviourDiff]];
  // the first two outcomes of a walk that spreads over many endpoints
  const parts = w.wanted.map(outcomeText).sort();
  const sent =
    parts.length > 2
      ? `${parts.slice(0, 2).join(', ')} ... (${parts.length} endpoints)`
      : w.expected;
  const chain = table.chainOf(id).name;
  const line = table.line(id);
  const del = iptablesDelete(c.node, table.family, table.name, table.text(id));
  if (!diverted)
    for (const [p, ws] of ports)
      for (const x of ws)
        if (x.wanted.some((o) => o.refused === 'DROP'))
          c.undropped.add(`${p.name} ${internal(p, x) ? 'internal' : 'external'}`);
  c.add({
    id: diverted ? 'service-traffic-diverted' : 'no-endpoints-reject-missing',
    ...(ports.length === 1 ? { service: names[0]! } : {}),
    title: `a rule kube-proxy does not write in ${table.name} ${chain} (line ${line}) catches ${ports.length === 1 ? names[0]! : `${ports.length} Service ports`}`,
    message: `node ${c.node}'s ${table.name} ${chain} has a rule kube-proxy does not write (line ${line}: ${table.text(id)}); it catches the packets of ${named}: ${w.packet} ends ${w.actual || 'nowhere'} where kube-proxy sends it ${sent || 'nowhere'}${diverted ? ', so they never reach the endpoints' : `: ${unrefused(sp, w, table.target(id) === 'ACCEPT')}`}.`,
    expected: [],
    actual: [`-t ${table.name} ${table.text(id)}`],
    // the rule's words as a command (quoted when shown), never its text pasted into one
    ...(del
      ? {
          advice: `Find what added the rule (a firewall, a script, another controller) and remove it (the command below deletes it).`,
          next: del,
        }
      : {
          advice: `Find what added the rule (a firewall, a script, another controller) and remove it (iptables -D with the rule as line ${line} of the dump shows it).`,
        }),
  });
}

/** The walk's packet is for the cluster IP: kube-proxy's internal traffic policy applies. */
const internal = (sp: ExpectedServicePort, w: BehaviourDiff) => w.sent.dst === sp.clusterIP;

/** What the rule changes for a packet kube-proxy does not DNAT: why kube-proxy refuses it, and
 * that it is now accepted (`accepts`: the rule's verdict) or let on. */
function unrefused(sp: ExpectedServicePort, w: BehaviourDiff, accepts: boolean): string {
  const refused = w.wanted.find((o) => o.refused)?.refused;
  const inside = internal(sp, w);
  const dst = inside
    ? 'cluster IP'
    : w.sent.dport === sp.nodePort
      ? 'node port'
      : `address ${w.sent.dst}`;
  // kube-proxy lets them on unchanged: the rule is what changes them
  if (!refused) return `kube-proxy leaves the ${dst}'s packets unchanged; the rule does not`;
  const why =
    refused === 'REJECT' || !sp.hasEndpoints
      ? 'the Service has no endpoints'
      : `this node runs none of its endpoints (${inside ? 'internal' : 'external'}TrafficPolicy: Local)`;
  const verb = refused === 'REJECT' ? 'rejects' : 'drops';
  return `the ${dst}'s packets, which kube-proxy ${verb} because ${why}, are ${accepts ? 'accepted' : 'let on'} instead`;
}

/** Whether the node's rule comes before a port's last rule in its chain (one naming the port's
 * address: its jump, after an older release's masquerade rule) or, for a node port, before the
 * jump to KUBE-NODEPORTS; for a port without one, whether it stands in the chain's first half. */
function beforePort(table: Table, id: number): (sp: ExpectedServicePort) => boolean {
  const ids = table.chainOf(id).ruleIds;
  const at = ids.indexOf(id);
  const last = new Map<string, number>();
  const nodePorts = ids.findIndex((x) => table.target(x) === 'KUBE-NODEPORTS');
  ids.forEach((x, k) => {
    const d = table.destination(x);
    if (d !== undefined) last.set(d, k);
  });
  return (sp) => {
    const own = [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs].flatMap((h) => {
      const k = last.get(hostCidr(h));
      return k === undefined ? [] : [k];
    });
    // a node port's packets pass the chain down to its jump to KUBE-NODEPORTS
    if (sp.nodePort !== undefined && at < nodePorts) return true;
    return own.length ? at < Math.max(...own) : at < ids.length / 2;
  };
}

/** kube-proxy's rules (`save`) with the node's rule first or last in its chain; undefined where
 * kube-proxy writes no such chain. */
function withLine(save: string, table: Table, id: number, first: boolean): Ruleset | undefined {
  const lines = save.split('\n');
  const chain = table.chainOf(id).name;
  const from = lines.indexOf(`*${table.name}`);
  const commit = lines.indexOf('COMMIT', from);
  if (from < 0 || !lines.slice(from, commit).includes(`:${chain} - [0:0]`)) return undefined;
  const at: number[] = [];
  for (let i = from; i < commit; i++) if (lines[i]!.startsWith(`-A ${chain} `)) at.push(i);
  const end = (at.at(-1) ?? commit - 1) + 1;
  lines.splice(first ? (at[0] ?? end) : end, 0, table.text(id));
  return parseIptables(lines.join('\n'));
}

/** The rule may match a packet to one of the port's frontends: its destination, protocol and
 * port, as far as the table reads them (the walk decides). */
function mayMatch(table: Table, id: number, sp: ExpectedServicePort, node: string[]): boolean {
  const proto = table.protocol(id);
  const flags = table.flags(id);
  if (proto !== undefined && !(flags & RuleFlag.protoNegated) && proto !== sp.protocol)
    return false;
  const dport = table.dport(id);
  const ports = [sp.port, sp.nodePort].filter((p) => p !== undefined).map(String);
  if (dport !== undefined && /^\d+$/.test(dport) && !(flags & RuleFlag.dportNegated))
    if (!ports.includes(dport)) return false;
  const dst = table.destination(id);
  if (dst === undefined || flags & RuleFlag.dstNegated) return true;
  const holds = cidrHolds(dst);
  const hosts = [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs];
  return [...hosts, ...(sp.nodePort === undefined ? [] : node)].some(holds);
}

/** The rule may send packets elsewhere than kube-proxy's chains do: a verdict, or a jump or
 * target that is not kube-proxy's (its own jumps are compared per Service port). */
export function mayDivert(table: Table, id: number): boolean {
  const target = table.target(id);
  return target !== undefined && !target.startsWith('KUBE-');
}
