// What Cilium's agent should hold, written as the agent itself lists it (Cilium 1.18+): its
// load-balancer tables (`cilium-dbg shell -- db/show frontends`, `backends`) and its BPF maps
// (`cilium-dbg bpf lb list`), so a person can set kdebug's expectation beside the agent's own.
import type { ExpectedBackend, ExpectedFrontend } from './expected.js';
import { formatAddress, frontendKey } from '../read/listing.js';
import type { ExpectedMapEntry } from '../maps/expected.js';
import { nodePortsText, type CiliumNodePorts } from '../agent/devices.js';
import { ignoredRangesOf } from './source-ranges.js';
import {
  knows,
  partialText,
  type ConfigOnlySetting,
  type PartialReplacement,
} from '../agent/agent.js';
import { sourceRangeCheckOf } from '../agent/comparable.js';
import { SETTING_NOT_KNOWN } from '../agent/refused.js';
import { DEFAULT_BACKEND_WEIGHT } from './backends.js';

/** Columns as Go's tabwriter aligns them: each as wide as its widest cell, then three spaces. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3)))
      .join('')
      .trimEnd(),
  );
}

const backendText = (b: Pick<ExpectedBackend, 'ip' | 'port' | 'protocol'>) => formatAddress(b);

/** `db/show frontends`: Address, Type, ServiceName, PortName, Backends (the first five), Status. */
export function frontendsTable(frontends: readonly ExpectedFrontend[]): string[] {
  const rows = [['Address', 'Type', 'ServiceName', 'PortName', 'Backends', 'Status']];
  for (const f of sorted(frontends)) {
    const shown = f.backends.slice(0, 5).map(backendText).join(', ');
    const more = f.backends.length > 5 ? ` + ${f.backends.length - 5} more ...` : '';
    rows.push([frontendKey(f), f.type, f.service, f.portName, shown + more, 'Done']);
  }
  return table(rows);
}

/** `db/show backends`: each backend once, its Service and port names, its state when not active. */
export function backendsTable(frontends: readonly ExpectedFrontend[]): string[] {
  const byAddress = new Map<string, { b: ExpectedBackend; instances: Set<string> }>();
  for (const f of frontends)
    for (const b of f.backends) {
      const k = backendText(b);
      const e = byAddress.get(k) ?? { b, instances: new Set<string>() };
      const state = b.state === 'active' ? '' : ` [${b.state}]`;
      e.instances.add(`${f.service}${state}${f.portName ? ` (${f.portName})` : ''}`);
      byAddress.set(k, e);
    }
  const rows = [['Address', 'Instances', 'NodeName']];
  for (const [k, e] of [...byAddress].sort(([a], [b]) => a.localeCompare(b)))
    rows.push([k, [...e.instances].join(', '), e.b.nodeName ?? '']);
  return table(rows);
}

/** `bpf lb list` (1.18): a row per map slot, the Service entry (slot 0) with its flags, then its
 * backends, the ones that take new connections first; NodePorts on each NodePort address besides
 * the wildcard entry. */
export function bpfLbList(entries: readonly ExpectedMapEntry[]): string[] {
  const rows = [['SERVICE ADDRESS', 'BACKEND ADDRESS (REVNAT_ID) (SLOT)']];
  const order = [...entries].sort((a, b) =>
    frontendKey(a.frontend).localeCompare(frontendKey(b.frontend)),
  );
  order.forEach((e, i) => {
    const revNat = i + 1;
    const key = frontendKey({ ...e.frontend, ip: e.ip });
    const zero = e.ip.includes(':') ? '[::]:0' : '0.0.0.0:0';
    rows.push([
      `${key} (0)`,
      `${zero} (${revNat}) (0) [${[e.frontend.type, ...e.flags].join(', ')}]`,
    ]);
    e.backends.forEach((b, k) =>
      rows.push([`${key} (${k + 1})`, `${backendText(b)} (${revNat}) (${k + 1})`]),
    );
  });
  return table(rows);
}

/** Each backend's weight, which db/show backends does not show (service list -o json does, and
 * Maglev fills a frontend's table by it): those not the default 100, by address. */
export function weightLines(frontends: readonly ExpectedFrontend[]): string[] {
  const weights = new Map<string, number>();
  for (const f of frontends)
    for (const b of f.backends)
      if (b.weight !== DEFAULT_BACKEND_WEIGHT) weights.set(backendText(b), b.weight);
  const head = `# weights (service list -o json's weight; Maglev fills a frontend's table by them): ${DEFAULT_BACKEND_WEIGHT} each`;
  if (weights.size === 0) return [`${head}`];
  const rows = [...weights].sort(([a], [b]) => a.localeCompare(b));
  return [
    `${head} but`,
    ...table([['Address', 'Weight'], ...rows.map(([k, w]) => [k, String(w)])]),
  ];
}

const sorted = (frontends: readonly ExpectedFrontend[]) =>
  [...frontends].sort((a, b) => frontendKey(a).localeCompare(frontendKey(b)));

/** Where the BPF maps' NodePort entries are: the NodePort addresses and where they were read, or
 * why only the wildcard entry is written. */
function nodePortHeader(n: CiliumNodePorts | undefined, refused: boolean): string {
  if (!n && refused)
    return `NodePort devices and addresses not read (no agent status recorded) and those cilium-config names ${SETTING_NOT_KNOWN}: NodePorts on the wildcard entry only`;
  if (!n)
    return 'NodePort devices and addresses not read (no agent status recorded, none named in cilium-config): NodePorts on the wildcard entry only';
  if (!n.addresses)
    return `NodePort ${nodePortsText(n)}, from ${n.source}: NodePorts on the wildcard entry only`;
  return `NodePorts on ${nodePortsText(n)}, from ${n.source}`;
}

/** `kdebug expect` on a Cilium node: the agent's three listings as it should print them, under a
 * header that names the agent, its release and where its settings came from. */
export function expectedCiliumText(
  frontends: readonly ExpectedFrontend[],
  maps: readonly ExpectedMapEntry[],
  o: {
    node: string;
    agent: string;
    version?: string;
    /** Where each setting was read (agent/provenance.ts settingsSaid). */
    settings: string;
    nodePorts?: CiliumNodePorts;
    /** Why cilium-config as read would stop the agent at a start (agent/lb-config.ts
     * lbConfigRefused). */
    refused?: string;
    /** The agent so refused has not started (not ready, nothing of it listed): no table is
     * expected of it; else it runs on an earlier configuration, and the table is said with a note. */
    notStarted?: boolean;
    /** Whether it started is not known (its readiness not read, nothing of it listed). */
    startUnknown?: boolean;
    /** The agent's source-range check (agent/agent.ts sourceRangeCheck; on by default). */
    sourceRangeCheck?: boolean;
    /** The agent's settings not known (agent/agent.ts notKnown). */
    notKnown?: readonly ConfigOnlySetting[];
    /** A replacement short of full: the kinds it leaves are kube-proxy's, not in the tables. */
    replacement?: PartialReplacement;
  },
): string {
  const head = `# what Cilium's agent ${o.agent}${o.version ? ` (${o.version})` : ''} on ${o.node} should hold, as it lists it; settings: ${o.settings}`;
  if (o.refused && o.notStarted) return `${head}\n# nothing: ${o.refused}\n`;
  // a frontend the agent holds at one of several addresses is said apart, not listed as held;
  // one only kube-proxy replacement makes, not known, too
  const apart = (f: ExpectedFrontend) =>
    f.oneOf || f.kprNotKnown || f.familyNotKnown || f.proxyNameNotKnown;
  const held = frontends.filter((f) => !apart(f));
  // a wildcard entry whether the agent writes is not known: said apart
  const entries = maps.filter((e) => !apart(e.frontend) && !e.wildcardNotKnown);
  return [
    head,
    ...(o.refused
      ? [
          o.startUnknown
            ? `# note: cilium-config as read would stop the agent at a start, and whether it started is not known (its readiness was not read): what it holds, if it runs on an earlier configuration: ${o.refused}`
            : `# note: cilium-config as read would be refused at the agent's next start, so what it holds comes from an earlier configuration: ${o.refused}`,
        ]
      : []),
    ...(o.replacement
      ? [
          `# note: ${partialText(o.replacement)} (${o.replacement.source})${o.replacement.leaves?.length ? `: frontends of the kinds it leaves are kube-proxy's, none in the tables below` : ''}`,
        ]
      : []),
    ...kprNotKnownLines(frontends.filter((f) => f.kprNotKnown)),
    ...familyNotKnownLines(frontends.filter((f) => f.familyNotKnown && !f.kprNotKnown)),
    ...proxyNameNotKnownLines(
      frontends.filter((f) => f.proxyNameNotKnown && !f.familyNotKnown && !f.kprNotKnown),
    ),
    ...topologyNotKnownLines(held.filter((f) => f.topologyNotKnown)),
    ...(knows(o, 'healthCheckLoadBalancerIP')
      ? []
      : [
          `# note: the health server's frontends on LoadBalancer IPs (enable-health-check-nodeport, enable-health-check-loadbalancer-ip) ${SETTING_NOT_KNOWN}; none is in the tables below`,
        ]),
    '# cilium-dbg shell -- db/show frontends',
    ...frontendsTable(held),
    ...oneOfLines(frontends.filter((f) => f.oneOf && !f.kprNotKnown)),
    ...ignoredRangesOf(frontends, sourceRangeCheckOf(o)).map((s) => `# ${s.text}`),
    '',
    '# cilium-dbg shell -- db/show backends',
    ...backendsTable(held),
    ...weightLines(held),
    '',
    `# cilium-dbg bpf lb list (${nodePortHeader(o.nodePorts, o.refused !== undefined)})`,
    ...flagsNotKnownLine(entries),
    ...wildcardsNotKnownLine(maps.filter((e) => e.wildcardNotKnown && !apart(e.frontend))),
    ...bpfLbList(entries),
    '',
  ].join('\n');
}

/** The frontends the agent makes only with kube-proxy replacement, which is not known: said
 * apart, none in the tables. */
function kprNotKnownLines(frontends: readonly ExpectedFrontend[]): string[] {
  if (frontends.length === 0) return [];
  const each = sorted(frontends).map(
    (f) =>
      `${frontendKey(f)} ${f.type} ${f.service} -> ${f.backends.map(backendText).join(', ') || 'no backends'}`,
  );
  return [
    `# note: kube-proxy replacement ${SETTING_NOT_KNOWN}; the agent makes these only with it, so they are not in the tables below: ${each.join('; ')}`,
  ];
}

/** The frontends of a family whether the agent runs is not known: said apart, none in the
 * tables. */
function familyNotKnownLines(frontends: readonly ExpectedFrontend[]): string[] {
  return (['IPv4', 'IPv6'] as const).flatMap((family) => {
    const of = sorted(frontends.filter((f) => f.familyNotKnown === family));
    if (of.length === 0) return [];
    const each = of.map(
      (f) =>
        `${frontendKey(f)} ${f.type} ${f.service} -> ${f.backends.map(backendText).join(', ') || 'no backends'}`,
    );
    return [
      `# note: ${family} (enable-${family.toLowerCase()}) ${SETTING_NOT_KNOWN}; the agent makes these only with it, so they are not in the tables below: ${each.join('; ')}`,
    ];
  });
}

/** The frontends of Services whether the agent handles is not known: said apart, none in the
 * tables. */
function proxyNameNotKnownLines(frontends: readonly ExpectedFrontend[]): string[] {
  if (frontends.length === 0) return [];
  const each = sorted(frontends).map(
    (f) =>
      `${frontendKey(f)} ${f.type} ${f.service} -> ${f.backends.map(backendText).join(', ') || 'no backends'}`,
  );
  return [
    `# note: which Services the agent handles (k8s-service-proxy-name) ${SETTING_NOT_KNOWN}, and no listing read shows it handles these, so they are not in the tables below: ${each.join('; ')}`,
  ];
}

/** The frontends whose backends service topology would narrow, that setting not known: the
 * tables hold them without it. */
function topologyNotKnownLines(frontends: readonly ExpectedFrontend[]): string[] {
  if (frontends.length === 0) return [];
  const each = sorted(frontends).map(
    (f) =>
      `${frontendKey(f)} -> ${f.topologyNotKnown!.map(backendText).join(', ') || 'no backends'}`,
  );
  return [
    `# note: service topology (enable-service-topology) ${SETTING_NOT_KNOWN}; the tables below select backends without it, with it they are: ${each.join('; ')}`,
  ];
}

/** The flags the rows leave out, their options not known (maps/expected.ts flagsNotKnown). */
function flagsNotKnownLine(maps: readonly ExpectedMapEntry[]): string[] {
  const each = new Map(maps.flatMap((e) => e.flagsNotKnown ?? []).map((x) => [x.flag, x.option]));
  if (each.size === 0) return [];
  const what = [...each].map(([flag, option]) => `${flag} (${option})`).join(', ');
  return [
    `# left out of the rows below, whether an entry carries them ${SETTING_NOT_KNOWN}: ${what}`,
  ];
}

/** The wildcard entries whether the agent writes is not known (maps/expected.ts
 * wildcardNotKnown): said apart, none in the rows. */
function wildcardsNotKnownLine(maps: readonly ExpectedMapEntry[]): string[] {
  if (maps.length === 0) return [];
  const options = [...new Set(maps.flatMap((e) => e.wildcardNotKnown ?? []))].join(', ');
  const each = maps.map(
    (e) => `${frontendKey({ ...e.frontend, ip: e.ip })} (${e.frontend.service})`,
  );
  return [
    `# not in the rows below: whether the agent writes these wildcard entries, which drop traffic from outside to the address's other ports, rests on ${options}, ${SETTING_NOT_KNOWN}: ${each.join(', ')}`,
  ];
}

/** Each Service's frontends of which the agent holds one: the health server's, which it keeps
 * on the LoadBalancer IP it saw last. */
function oneOfLines(frontends: readonly ExpectedFrontend[]): string[] {
  const services = [...new Set(frontends.map((f) => f.service))];
  return services.map((service) => {
    const all = sorted(frontends.filter((f) => f.service === service));
    const each = all.map((f) => `${frontendKey(f)} -> ${f.backends.map(backendText).join(', ')}`);
    const or = all[0]!.orNone ? ' or none, where that was a NodePort address' : '';
    return `# and one of ${each.join(', ')} (${all[0]!.type} ${service}: the agent keeps it on one LoadBalancer IP, the last it saw${or})`;
  });
}
