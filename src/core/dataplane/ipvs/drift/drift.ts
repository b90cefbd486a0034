// Drift in IPVS mode: the virtual servers, real servers, kube-ipvs0 addresses, ipset entries and
// iptables rules kube-proxy should program (expected/expected.ts) against what the node lists. The
// iptables-mode ids where the meaning is the same (endpoint missing or stale, rules or node port
// missing, local policy wrong, affinity wrong, a masquerade, firewall or jump rule missing), and
// IPVS's own: a VIP not on kube-ipvs0, an ipset entry missing, a real server at weight 0 while its
// endpoint is ready.
import { IPVS_SERVICE_FLAG } from '../../../nodes/commands.js';
import { kubeProxyPodOn } from '../../iptables/drift/context.js';
import { onNode } from '../../../findings/next-command.js';
import {
  quote,
  driftFinding,
  isDrift,
  sortFindings,
  type DriftFinding,
  type NodeDrift,
  type AddFinding as Add,
} from '../../drift.js';
import type { ExpectedIpvs, ExpectedVirtualServer } from '../expected/expected.js';
import type { Ipset } from '../read/ipset.js';
import type { IpvsRead } from '../dataplane.js';
import { entryKey, serverKey, type IpsetTested } from '../read/by-address.js';
import type { IpvsRealServer, IpvsService, IpvsTable } from '../read/listing.js';
import { stalePorts, stalePortsText } from './stale-ports.js';
import { ipvsIptablesDrift } from './iptables-rules.js';
import { notReadByAddress } from '../traits.js';
import type { Ruleset } from '../../iptables/read/parse.js';
import { FORWARD_FLAG } from '../forwarding.js';
import type { ServiceListScope } from '../../../facts/service-list-scope.js';

export interface IpvsDriftInput {
  node: string;
  /** "nodes/NODE/ipvsadm-save.txt" */
  source: string;
  expected: ExpectedIpvs;
  table: IpvsTable;
  /** kube-proxy's ipsets as read (`ipset list -o save`); undefined when not read. */
  ipsets?: Map<string, Ipset>;
  ipsetsSource?: string;
  /** Why the recorded ipsets could not be read: said in a note, not compared. */
  ipsetsError?: string;
  /** The addresses on kube-ipvs0 (`ip -br addr`); undefined when not read. */
  bound?: Set<string>;
  /** The node's iptables dump of this family ("nodes/NODE/iptables-save.txt"); its ruleset
   * undefined when not read or not readable. */
  iptables?: { ruleset?: Ruleset; source: string };
  /** Addresses of this node's endpoints, for telling a local-policy fault from a stale one. */
  localEndpoints: Set<string>;
  /** Only the Service ports expected (one Service's answer): no leftover virtual servers. */
  scoped: boolean;
  /** Which namespaces' Service lists were read whole: a virtual server names no Service, so one
   * is left over only where every namespace's were. */
  listed: ServiceListScope;
  /** Read by address: only what was read is compared (the rest is not observed). */
  byAddress?: IpvsRead['byAddress'];
}

/** kube-proxy on the node has not written the current state (of the objects its release reads):
 * its log says why. */
const notSyncing = (node: string, exp: ExpectedIpvs) => ({
  notSynced: true as const,
  advice: `kube-proxy on ${node} has not synced the current Services and ${exp.endpointsFrom.reads}: its log says why; deleting its Pod makes it resync everything.`,
  next: kubeProxyPodOn(node),
});

// ipvsadm's flag for a virtual server of each protocol, and of a firewall mark
const FLAG = { ...IPVS_SERVICE_FLAG, fwmark: '-f' } as const;
const vsLine = (v: { protocol: keyof typeof FLAG; address: string }) =>
  `${FLAG[v.protocol]} ${v.address}`;

/** A virtual server as read, in ipvsadm-save's words, with where it was read: what the node has
 * is shown as a line, whichever view it was read from; a difference unless `asWritten`. */
const vsText = (s: IpvsService, source: string, asWritten = false) =>
  quote(
    source,
    s.line,
    `-A ${vsLine(s)}${s.scheduler ? ` -s ${s.scheduler}` : ''}${s.persistent !== undefined ? ` -p ${s.persistent}` : ''}`,
    asWritten,
  );

const rsText = (s: IpvsService, r: IpvsRealServer, source: string) =>
  quote(
    source,
    r.line,
    `-a ${vsLine(s)} -r ${r.address}${r.forward ? ` ${FORWARD_FLAG[r.forward] ?? r.forward}` : ''}${r.weight !== undefined ? ` -w ${r.weight}` : ''}`,
  );

export function ipvsDrift(input: IpvsDriftInput): NodeDrift {
  const { node, source, expected: exp, table } = input;
  const findings: DriftFinding[] = [];
  const notes: DriftFinding[] = [];
  const add: Add = (id, f) => findings.push(driftFinding(id, f, { node, source }));
  // the node's virtual servers by protocol, then address: no key string made per server
  const actual = new Map<string, Map<string, IpvsService>>();
  for (const s of table.services) {
    let at = actual.get(s.protocol);
    if (!at) actual.set(s.protocol, (at = new Map()));
    at.set(s.address, s);
  }
  const serverAt = (v: ExpectedVirtualServer) => actual.get(v.protocol)?.get(v.address);
  // what kube-proxy should have, by key: made only where something is missing or left over
  let knownKeys: Set<string> | undefined;
  const known = () =>
    (knownKeys ??= new Set(exp.virtualServers.map((v) => `${v.protocol} ${v.address}`)));
  const named = new Set<IpvsService>(); // at another port of a cluster IP: said with its port
  const listed = (v: ExpectedVirtualServer) => serverAt(v) !== undefined;
  for (const want of exp.virtualServers) {
    // read by address: one not read is neither there nor missing
    if (input.byAddress && !input.byAddress.virtualServers.has(serverKey(want))) continue;
    const got = serverAt(want);
    const line = `-A ${vsLine(want)} -s ${want.scheduler}${want.persistent !== undefined ? ` -p ${want.persistent}` : ''}`;
    if (!got) {
      const nodePort = want.kind === 'node-port';
      const stale = stalePorts(want, exp, table, known(), listed);
      const moved = [...stale.told, ...stale.untold];
      for (const s of moved) named.add(s);
      add(nodePort ? 'nodeport-missing' : 'service-rules-missing', {
        service: want.name,
        title: `no virtual server ${want.protocol.toUpperCase()} ${want.address}`,
        message: `${node} has no IPVS virtual server for ${want.name} at ${want.address} (${want.kind}): connections to it are not load-balanced on this node. ${moved.length > 0 ? stalePortsText(stale) : `kube-proxy creates it on every sync, so it was deleted by hand or kube-proxy is not syncing${input.byAddress && want.kind === 'cluster-ip' ? ' (or the Service changed its port and kube-proxy has not applied it: read by address, a virtual server left at the old port is not seen)' : ''}.`}`,
        expected: [line],
        actual: moved.map((s) => vsText(s, source)),
        ...notSyncing(node, input.expected),
      });
      continue;
    }
    // its real servers follow the endpoints: not read, what the node holds is not compared
    if (!exp.endpointsFrom.notRead) realServers(want, got, input, add, notes);
    if ((got.persistent ?? undefined) !== want.persistent)
      add('affinity-wrong', {
        service: want.name,
        title: `${want.address}: persistence ${got.persistent ?? 'off'}, expected ${want.persistent ?? 'off'}`,
        message: `The virtual server ${want.address} of ${want.name} on ${node} ${got.persistent === undefined ? 'has no persistence' : `keeps clients for ${got.persistent} s`}, but the Service's session affinity says ${want.persistent === undefined ? 'none' : `ClientIP for ${want.persistent} s`}.`,
        expected: [line],
        actual: [vsText(got, source)],
      });
  }
  if (input.bound) {
    const missing = exp.bound.filter((ip) => !input.bound!.has(ip));
    for (const ip of missing) {
      const vs = exp.virtualServers.find((v) =>
        v.address.startsWith(ip.includes(':') ? `[${ip}]` : `${ip}:`),
      );
      add('vip-not-on-kube-ipvs0', {
        ...(vs ? { service: vs.name } : {}),
        title: `${ip} not on kube-ipvs0`,
        message: `kube-proxy binds ${ip} to the dummy interface kube-ipvs0 so that the node takes packets for it as its own and IPVS sees them; on ${node} it is not there, so connections to ${ip} leave the node unbalanced instead.`,
        expected: [`ip addr add ${ip}/${ip.includes(':') ? 128 : 32} dev kube-ipvs0`],
        // kube-ipvs0's addresses are read from ip -br addr, not from the virtual servers
        actualAt: { source: `nodes/${node}/ip-addr.txt` },
        next: onNode(node, ['ip', '-br', 'addr', 'show', 'kube-ipvs0']),
      });
    }
  }
  const notRead: DriftFinding[] = [];
  if (exp.endpointsFrom.notRead)
    notRead.push(
      driftFinding(
        'table-not-captured',
        {
          title: `${exp.endpointsFrom.reads} not captured: the virtual servers' real servers were not compared`,
          message: `kube-proxy on ${node} takes the Services' endpoints from the ${exp.endpointsFrom.reads}, and ${exp.endpointsFrom.notRead}: which real servers each virtual server should have is not observed, never compared with "no endpoints"; the virtual servers themselves were.`,
          advice: `Capture with read access to the ${exp.endpointsFrom.reads} (kubectl auth can-i list ${exp.endpointsFrom.reads.toLowerCase()}).`,
        },
        { node, source },
      ),
    );
  if (input.ipsetsError)
    notRead.push(
      driftFinding(
        'table-not-captured',
        {
          title: "kube-proxy's ipsets not compared",
          message: `The ipsets recorded for ${node} could not be read (${input.ipsetsError}), so their entries were not compared; the virtual servers were.`,
        },
        { node, source },
      ),
    );
  if (input.byAddress && input.byAddress.unread.length > 0)
    notRead.push(
      driftFinding(
        'table-not-captured',
        {
          title: "reads by address of the Service's state not recorded",
          message: `On ${node}, ${notReadByAddress(input.byAddress.unread)}.`,
        },
        { node, source },
      ),
    );
  if (input.ipsets)
    ipsetEntries(
      exp,
      input.ipsets,
      input.ipsetsSource ?? 'ipset',
      add,
      node,
      input.byAddress?.entries,
    );
  const rules = input.iptables?.ruleset;
  const tables = rules
    ? ipvsIptablesDrift(exp.iptables, { ruleset: rules, source: input.iptables!.source }, node, add)
    : [];
  const uncompared = exp.iptables.uncompared ?? [];
  if (tables.includes('nat') && uncompared.length > 0)
    notRead.push(
      driftFinding(
        'table-not-captured',
        {
          title: "kube-proxy's cluster IP masquerade rule not compared",
          message: `kube-proxy's configuration was not read and ${node}'s rules do not show one condition for masquerading cluster IP traffic (masqueradeAll, clusterCIDR, detectLocalMode write its form), so its rule in KUBE-SERVICES was not compared: it is neither missing nor stale.`,
        },
        { node, source },
      ),
    );
  if (tables.length < 2)
    notRead.push(
      driftFinding(
        'table-not-captured',
        {
          title: `kube-proxy's ${tables.length === 0 ? 'iptables rules' : `${tables[0] === 'nat' ? 'filter' : 'nat'} table`} not compared`,
          message: `kube-proxy writes nat and filter rules beside its virtual servers in IPVS mode; ${rules ? `the dump read for ${node} (${input.iptables!.source}) has no ${tables[0] === 'nat' ? 'filter' : 'nat'} table` : `${node}'s ${exp.family === 'IPv6' ? 'ip6tables-save' : 'iptables-save'} was not ${input.iptables ? 'readable' : 'read'}`}, so ${tables.length === 0 ? 'they were' : 'it was'} not compared.`,
        },
        { node, source },
      ),
    );
  // a virtual server has no Service name: left over only where every Service list was read
  if (!input.scoped && input.listed.kind === 'all') {
    // where the node's addresses were not read, a node port on another of them is no leftover
    const nodePorts = new Set(
      exp.nodeIPsKnown
        ? []
        : exp.virtualServers
            .filter((v) => v.kind === 'node-port')
            .map((v) => `${v.protocol} ${v.address.split(':').pop()}`),
    );
    for (const s of table.services)
      if (
        s.protocol !== 'fwmark' &&
        !named.has(s) &&
        !known().has(`${s.protocol} ${s.address}`) &&
        !nodePorts.has(`${s.protocol} ${s.address.split(':').pop()}`)
      )
        add('orphan-chain', {
          title: `virtual server ${s.protocol.toUpperCase()} ${s.address} is left over`,
          message: `${node} has an IPVS virtual server at ${s.address} that no current Service port needs: kube-proxy deletes such servers on its next sync, unless they are in its --ipvs-exclude-cidrs or were made by someone else.`,
          actual: [vsText(s, source)],
        });
  }
  return {
    node,
    source,
    mode: 'ipvs',
    tables: [
      'ipvs',
      ...(input.bound ? ['kube-ipvs0'] : []),
      ...(input.ipsets ? ['ipset'] : []),
      ...tables,
    ],
    servicePorts: new Set(exp.virtualServers.map((v) => `${v.name} ${v.protocol}`)).size,
    findings: sortFindings(findings),
    ...(notes.length > 0 ? { notes } : {}),
    ...(notRead.length > 0 ? { notRead } : {}),
    drifted: findings.some(isDrift),
  };
}

function realServers(
  want: ExpectedVirtualServer,
  got: IpvsService,
  input: IpvsDriftInput,
  add: Add,
  notes: DriftFinding[],
): void {
  const { node, source } = input;
  const wanted = new Set(want.realServers);
  const at = (address: string) => got.realServers.find((r) => r.address === address);
  const where = `the virtual server ${want.address} (${want.kind}) of ${want.name}`;
  for (const address of want.realServers) {
    const r = at(address);
    if (!r)
      add('endpoint-missing', {
        service: want.name,
        title: `${want.address}: real server ${address} missing`,
        message: `${address} is an endpoint kube-proxy should send ${where} to, but ${node} does not: its kube-proxy has not synced since the endpoint became ready.`,
        expected: [`-a ${vsLine(want)} -r ${address} -m -w 1`],
        // the virtual server the real server belongs under, as kube-proxy wrote it
        actual: [vsText(got, source, true)],
      });
    else if (r.weight === 0)
      add('real-server-weight-zero', {
        service: want.name,
        title: `${want.address}: real server ${address} at weight 0`,
        message: `${address} is a ready endpoint of ${want.name}, but ${where} on ${node} gives it weight 0, so IPVS sends it no new connection: kube-proxy sets 0 only while it drains an endpoint it is removing.`,
        expected: [`-a ${vsLine(want)} -r ${address} -m -w 1`],
        actual: [rsText(got, r, source)],
      });
  }
  for (const r of got.realServers.filter((x) => !wanted.has(x.address))) {
    const draining = r.weight === 0;
    const f = {
      service: want.name,
      endpoint: r.address,
      actual: [rsText(got, r, source)],
    };
    // its weight not in the listing: neither draining nor still taken is observed
    if (r.weight === undefined)
      notes.push(
        driftFinding(
          'endpoint-stale',
          {
            ...f,
            title: `${want.address}: ${r.address} is no longer an endpoint, its weight not in the listing`,
            message: `${r.address} is no longer an endpoint of ${want.name}, but ${where} on ${node} still lists it; its weight is not in the listing, so whether kube-proxy drains it (weight 0, until its connections end) or still sends it new connections is not known.`,
          },
          { node, source },
          'info',
        ),
      );
    else if (draining)
      notes.push(
        driftFinding(
          'endpoint-stale',
          {
            ...f,
            title: `${want.address}: ${r.address} draining (weight 0)`,
            message: `${r.address} is no longer an endpoint of ${want.name}; kube-proxy keeps it at weight 0 on ${node} until its connections end (graceful termination), and sends it nothing new.`,
          },
          { node, source },
          'info',
        ),
      );
    else if (want.local && !input.localEndpoints.has(r.address))
      add('local-policy-wrong', {
        ...f,
        title: `${want.address}: ${r.address} is not on ${node}`,
        message: `${where} has a Local traffic policy, so kube-proxy on ${node} should send it to this node's endpoints only, but it also sends to ${r.address}.`,
      });
    else
      add('endpoint-stale', {
        ...f,
        title: `${want.address}: real server ${r.address} is no longer an endpoint`,
        message: `${where} on ${node} still sends new connections to ${r.address} (weight ${r.weight}), which is not an endpoint kube-proxy should use now: those connections go to a Pod that is gone or not ready.`,
        ...notSyncing(node, input.expected),
      });
  }
}

function ipsetEntries(
  exp: ExpectedIpvs,
  sets: Map<string, Ipset>,
  source: string,
  add: Add,
  node: string,
  /** Read by address: the entries tested; any other is not compared. */
  tested?: ReadonlyMap<string, IpsetTested>,
): void {
  for (const [name, expected] of exp.ipsets) {
    const entries = tested ? expected.filter((e) => tested.has(entryKey(name, e))) : expected;
    const got = sets.get(name);
    const missing = entries.filter((e) => !got?.entries.has(e));
    if (missing.length === 0) continue;
    const owner = missing.map((e) => exp.entryOwners.get(name)?.get(e)).find((o) => o);
    add('ipset-entry-missing', {
      ...(owner ? { service: owner } : {}),
      title: `${name}: ${missing.length === 1 ? missing[0] : `${missing.length} entries`} missing`,
      message: `kube-proxy's iptables rules in IPVS mode match its ipsets, and ${got ? `${name} on ${node} lacks ${missing.length === 1 ? 'an entry' : 'entries'} it should have` : `${node} has no ipset ${name}`}: ${WHY[name.replace(/^KUBE-6-/, 'KUBE-')] ?? 'the rules that match it miss these addresses'}.`,
      expected: missing.slice(0, 20).map((e) => `add ${name} ${e}`),
      // ipset test's answers, where tested; else a summary of the set: its file, no line number
      actual: tested
        ? missing.slice(0, 20).map((e) => {
            const t = tested.get(entryKey(name, e))!;
            return `${t.source}: ${t.words}`;
          })
        : [
            got
              ? `${source}: ${name} holds ${got.entries.size} entr${got.entries.size === 1 ? 'y' : 'ies'}`
              : `${source}: no set ${name}`,
          ],
      actualAt: { source },
    });
  }
}

/** What each set's rules do, so a missing entry says what breaks. */
const WHY: Record<string, string> = {
  'KUBE-CLUSTER-IP': 'traffic to these cluster IPs from outside the Pod network is not masqueraded',
  'KUBE-LOOP-BACK':
    'a Pod that reaches itself through the Service is not masqueraded, so its hairpin connection fails',
  'KUBE-NODE-PORT-TCP': 'node port traffic is not masqueraded and not sent to KUBE-NODE-PORT',
  'KUBE-NODE-PORT-UDP': 'node port traffic is not masqueraded and not sent to KUBE-NODE-PORT',
  'KUBE-NODE-PORT-SCTP-HASH': 'node port traffic is not masqueraded and not sent to KUBE-NODE-PORT',
  'KUBE-EXTERNAL-IP': 'traffic to these external IPs is not masqueraded or accepted',
  'KUBE-LOAD-BALANCER': 'load-balancer traffic is not sent to KUBE-LOAD-BALANCER',
  'KUBE-LOAD-BALANCER-FW': 'loadBalancerSourceRanges are not enforced',
  'KUBE-LOAD-BALANCER-SOURCE-CIDR': 'allowed source ranges are dropped by the firewall',
  'KUBE-IPVS-IPS': 'KUBE-IPVS-FILTER does not know these addresses as Service VIPs',
};
