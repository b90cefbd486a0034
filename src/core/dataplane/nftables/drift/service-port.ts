// Drift of one Service port in nftables mode: its map entries, no-endpoint verdicts, endpoints and
// shares, affinity, external-chain masquerade, firewall and hairpin, the node's against the plan
// kube-proxy writes it from (expected/expected-ports.ts).
import { kubeProxyPodOn } from '../../iptables/drift/context.js';
import { kubectl, valid } from '../../../findings/next-command.js';
import { hostPort } from '../../../ipv6.js';
import type { AddFinding as Add, Quote } from '../../drift.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import { percent } from '../../../model.js';
import { writes } from '../../kube-proxy/releases.js';
import type { EntryPoint, ServiceTree, TreeEndpoint } from '../../trees.js';
import {
  entriesAt,
  entriesElsewhere,
  entriesRemoved,
  notInApi,
  removedText,
} from '../../stale-entries.js';
import { firewallSources } from '../expected/port-script.js';
import { intervalSources, type NftPortPlan } from '../expected/expected-ports.js';
import type { NftRule, NftTable } from '../read/listing.js';
import { goesTo } from '../trees/expr.js';
import { portChain } from '../trees/port-chain.js';
import { rulesTo } from '../trees/endpoints.js';
import { elementAt, keyText, ruleAt, type PortCheck } from './context.js';
import { isAddress, signature } from './rule-signature.js';
import { absentFrom } from './absent.js';
import type { NftCommand } from '../expected/script.js';
import { ipv4 } from '../../../ipv4.js';
import { ipv6 } from '../../../ipv6.js';
import type { TraceProtocol } from '../../trace/packet.js';
import { hookChains, throughChains } from '../chain-walk.js';

/** A map element as read, in nft's words, where it was read: "FILE:LINE: service-ips 10.96.0.1 .
 * tcp . 443 : goto CHAIN". */
export const elementLine = (c: { source: string; table: NftTable }, x: EntryPoint) =>
  elementAt(c, x.from, keyOf(x.address, x.protocol, x.port), `goto ${x.chain}`);

/** A no-endpoint map element as read, where it was read ("… no-endpoint-services 10.96.0.9 . tcp .
 * 80 : drop"; reject: kube-proxy's `goto reject-chain`). */
const verdictLine = (c: PortCheck, a: ServiceTree, v: ServiceTree['verdicts'][number]) =>
  elementAt(c, v.chain, keyOf(v.address, a.protocol, v.port), v.kind);

/** A Service map's key: "address . protocol . port", a node port's without the address. */
const keyOf = (address: string | undefined, protocol: string, port: number | undefined) => [
  ...(address === undefined ? [] : [address]),
  protocol,
  ...(port === undefined ? [] : [port]),
];

/** One Service port: its entries, no-endpoint verdicts, endpoints and shares, affinity,
 * external-chain masquerade, firewall and hairpin, the node's against kube-proxy's. */
export function servicePort(
  sp: ExpectedServicePort,
  w: NftPortPlan,
  a: ServiceTree | undefined,
  /** The script lines kube-proxy writes for this port (those of the commands `only` keeps): each
   * finding's `expected`. */
  expected: (only?: (commands: NftCommand[]) => NftCommand[]) => string[],
  c: PortCheck,
): void {
  const { node, table } = c;
  const add: Add = (id, f) => c.add(id, { service: sp.name, expected: expected(), ...f });
  // what a line not read may hold of this port is not said missing: only what was read differs
  const blind = c.bearing(sp.name) !== undefined;
  const missing: Add = (id, f) => {
    if (!blind) add(id, f);
  };
  // the log of kube-proxy on the node says why its sync failed (made for a finding only: its
  // kubectl command is validated text, and most ports have none)
  const sync = () => ({
    notSynced: true as const,
    advice: `kube-proxy on ${node} has not written the current state: its log says why.`,
    // its Pod's log, as the advice says; where the API holds none, the command that finds it
    next: c.kubeProxyPod
      ? kubectl('kube-system', 'logs', valid.name(c.kubeProxyPod))
      : kubeProxyPodOn(node),
  });
  let entryWrong = false;
  const lacking = () => expected((cs) => absentFrom(table, cs));

  for (const e of w.entries) {
    const where = e.address
      ? `${hostPort(e.address, e.port ?? '')}/${e.protocol}`
      : `node port ${e.port}/${e.protocol}`;
    const found = a?.entries.find(
      (x) =>
        x.kind === e.kind &&
        x.address === e.address &&
        x.port === e.port &&
        x.protocol === e.protocol,
    );
    if (!found) {
      // an entry a line not read may hold: the chains behind it are still compared
      entryWrong ||= !blind;
      // the chains' names hold no port: the element of the port a change replaced leads there
      const want = { ...e, port: e.port ?? 0 };
      const moved = entriesElsewhere(a, want);
      const left = remaining(e, c, moved.length > 0);
      missing(e.kind === 'node-port' ? 'nodeport-missing' : 'service-rules-missing', {
        title: `no ${e.from} element for ${sp.name} (${where})`,
        message: `kube-proxy's table on ${node} has no ${e.from} element for ${sp.name}'s ${e.kind} ${where}, although the Service has endpoints: connections to it from ${node} ${left.fate}${moved.length > 0 ? `; its elements for ${entriesAt(moved)} lead into the Service port's chains instead, ${notInApi(want, moved)}` : ''}.`,
        // only what the table lacks is expected; what it still holds of the port is evidence
        expected: expected((cs) => absentFrom(table, cs)),
        actual: [...moved.map((x) => elementLine(c, x)), ...left.lines],
        ...sync(),
      });
    } else if (a?.absentChains?.includes(found.chain))
      // the trees say it of each entry, read from this table: not looked up again
      entryWrong = true; // element-chain-missing, from elementTargets
    else if (found.chain !== e.chain) {
      entryWrong = true;
      const local = /^local-/.test(found.chain) !== /^local-/.test(e.chain);
      add(local ? 'local-policy-wrong' : 'service-chain-missing', {
        title: `${where} goes to ${found.chain}, not ${e.chain}`,
        message: `kube-proxy's table on ${node} sends ${sp.name}'s ${e.kind} ${where} to ${found.chain}; for the Service's traffic policies kube-proxy sends it to ${e.chain}.`,
        actual: [elementLine(c, found)],
        ...sync(),
      });
    }
  }

  // elements of a kind or address the API took away: still routed, kube-proxy not synced since
  const removed = entriesRemoved(a, sp);
  if (removed.length > 0)
    add('entry-stale', {
      ...removedText(node, sp.name, removed),
      expected: [],
      actual: removed.map((x) => elementLine(c, x)),
      ...sync(),
    });

  for (const v of w.verdicts) {
    const where = v.address ? hostPort(v.address, v.port ?? '') : `node port ${v.port}`;
    const found = a?.verdicts.find(
      (x) => x.chain === v.chain && x.address === v.address && x.port === v.port,
    );
    if (found?.kind === v.kind) continue;
    // a cluster IP the table still rejects after DNAT: what the walk of the table does with it
    const refused = found ? undefined : clusterIpRefused(c, v.address);
    (found ? add : missing)('no-endpoints-reject-missing', {
      title: `no ${v.kind} for ${sp.name} at ${where}`,
      message:
        v.kind === 'reject'
          ? `${sp.name} has no endpoints, but kube-proxy's table on ${node} has no ${v.chain} element rejecting ${where}: ${refused ? `connections to it are still refused, by cluster-ips-check (${v.address} is in cluster-ips, and no service-ips element translates it), but the table is not what kube-proxy writes` : `connections to it pass the table untranslated instead of being refused`}.`
          : `${sp.name} has no endpoint on ${node} for this traffic (a Local traffic policy), but kube-proxy's table there has no ${v.chain} element dropping ${where}${found ? ` (it ${found.kind}s it)` : ''}.`,
      // only what the table lacks is expected; what it still holds of the port is evidence
      expected: lacking(),
      actual: found ? [verdictLine(c, a!, found)] : (refused ?? []),
    });
  }
  // a no-endpoint element kube-proxy did not write (the port has endpoints): stale
  for (const x of a?.verdicts ?? [])
    if (
      x.address !== undefined &&
      !w.verdicts.some((v) => v.chain === x.chain && v.address === x.address && v.port === x.port)
    )
      strayVerdict(sp, a!, x, c, add, sync);
  // an entry sent into a chain although kube-proxy would drop or reject it there
  for (const x of a?.entries ?? [])
    if (
      !w.entries.some((e) => e.address === x.address && e.port === x.port && e.kind === x.kind) &&
      w.verdicts.some((v) => v.address === x.address && v.port === x.port)
    )
      add('endpoint-stale', {
        title: `${x.address ?? 'node port'}:${x.port} still goes to ${x.chain}`,
        message: `kube-proxy's table on ${node} still sends ${sp.name}'s ${x.kind} ${x.address ?? ''}:${x.port} to ${x.chain}, but ${sp.name} has no endpoint for it now: those connections go to Pods that are gone or not ready.`,
        actual: [elementLine(c, x)],
      });

  if (a && !entryWrong) {
    if (w.chains.svc)
      endpoints(
        sp,
        w.endpoints,
        a.chains.svc ? a.endpoints : undefined,
        w.chains.svc,
        { add, missing, lacking },
        c,
      );
    if (w.chains.svl)
      endpoints(
        sp,
        w.localEndpoints,
        a.chains.svl ? (a.localEndpoints ?? []) : undefined,
        w.chains.svl,
        { add, missing, lacking },
        c,
      );
    if (w.affinitySeconds !== a.affinitySeconds)
      (a.affinitySeconds === undefined ? missing : add)('affinity-wrong', {
        title: `session affinity ${a.affinitySeconds === undefined ? 'missing' : `${a.affinitySeconds}s`}, not ${w.affinitySeconds === undefined ? 'none' : `${w.affinitySeconds}s`}`,
        message: `${sp.name} has ${w.affinitySeconds === undefined ? 'no session affinity' : `sessionAffinity ClientIP for ${w.affinitySeconds}s`}, but kube-proxy's table on ${node} ${a.affinitySeconds === undefined ? 'keeps no affinity sets for it' : `keeps clients for ${a.affinitySeconds}s`}.`,
      });
    else if (w.affinitySeconds !== undefined) unremembered(sp, a, add, c);
    for (const m of w.externalMasquerade)
      if (!a.masquerade.some((x) => x.chain === a.chains.ext && x.condition === m))
        missing('masquerade-missing', {
          title: `no masquerade mark in ${w.chains.ext}${m === 'all' ? '' : ` for ${m}`}`,
          message: `kube-proxy's table on ${node} does not mark ${sp.name}'s external traffic${m === 'all' ? '' : ` (${m})`} for masquerade: replies from an endpoint on another node go straight back to the client, which drops them.`,
          // the chain without the mark, its rules as kube-proxy writes them
          actual: (table.chain(w.chains.ext!)?.rules ?? []).map((r) => ruleAt(c.source, r, true)),
        });
  }
  if (w.chains.fw) firewall(sp, w.chains.fw, c, missing);
  // before 1.36 each endpoint chain marks its own hairpin traffic: no hairpin-connections set
  const hairpins = writes(c.release, 'nftInlineMasquerade') ? sp.reachableEndpoints : [];
  for (const ep of hairpins.filter((e) => e.local)) {
    let held = c.hairpin.get(sp.protocol);
    if (!held) c.hairpin.set(sp.protocol, (held = new Map()));
    let ports = held.get(ep.ip);
    if (!ports) held.set(ep.ip, (ports = []));
    const port = String(ep.port);
    if (ports.includes(port)) continue;
    ports.push(port); // one finding per element
    missing('masquerade-missing', {
      expected: lacking(),
      title: `${ep.address} not in hairpin-connections`,
      message: `${ep.address} is a local endpoint of ${sp.name}, but kube-proxy's table on ${node} has no hairpin-connections element for it: a Pod reaching itself through the Service gets replies from its own address and drops them.`,
    });
  }
}

/** A no-endpoint element for a port with endpoints, and what it does as the table stands: the
 * filter chains hooked before DNAT (1.31-1.32's filter-output) refuse new connections to it; after
 * DNAT no connection to it is left to meet it. */
function strayVerdict(
  sp: ExpectedServicePort,
  a: ServiceTree,
  x: ServiceTree['verdicts'][number],
  c: PortCheck,
  add: Add,
  sync: () => object,
): void {
  const where = hostPort(x.address!, x.port ?? '');
  const refused = refusedBeforeDnat(c.table, x.address!, x.port ?? 0, sp.protocol);
  const who = refused.map((r) => r.who).join(' and ');
  add('entry-stale', {
    title: `${x.chain} still ${x.kind}s ${where}`,
    message: `kube-proxy's table on ${c.node} has a ${x.chain} element that ${x.kind}s ${sp.name}'s ${where}, but the Service has endpoints: ${refused.length > 0 ? `new connections to it from ${who} are ${x.kind === 'reject' ? 'refused' : 'dropped'} by ${refused.map((r) => r.chain).join(' and ')}, which look${refused.length === 1 ? 's' : ''} it up before they are DNATed` : 'the checks that look it up run after DNAT, where no connection to it is left, so it refuses none as the table stands'}; kube-proxy removes it on its next sync.`,
    expected: [],
    actual: [
      verdictLine(c, a, x),
      // kube-proxy's own filter rules that refuse its connections
      ...refused.flatMap((r) => r.rules.map((y) => ruleAt(c.source, y, true))),
    ],
    ...sync(),
  });
}

/** The filter chains that run before DNAT on the output hook (the node's own processes) and on
 * prerouting (Pods and the network) and refuse a new connection to `address:port`. */
function refusedBeforeDnat(t: NftTable, address: string, port: number, protocol: string) {
  const ip = ipv4(address) ?? ipv6(address);
  if (ip === undefined) return [];
  const pkt = {
    src: t.family === 'ip6' ? ipv6('2001:db8::1')! : ipv4('192.0.2.1')!,
    dst: ip,
    sport: 40000,
    dport: port,
    protocol: protocol as TraceProtocol,
    mark: 0,
    dnat: false,
    snat: false,
  };
  const hooks = [
    ['output', 'processes on the node (host-network Pods too)'],
    ['prerouting', 'Pods and the network'],
  ] as const;
  return hooks.flatMap(([hook, who]) => {
    const chains = hookChains(t, hook);
    const nat = Math.min(...chains.filter((ch) => ch.type === 'nat').map((ch) => ch.prio ?? 0));
    return chains
      .filter((ch) => ch.type !== 'nat' && (ch.prio ?? 0) < nat)
      .filter((ch) => {
        const end = throughChains(t, [ch], pkt)?.end;
        return end === 'REJECT' || end === 'DROP';
      })
      .map((ch) => ({
        who,
        chain: ch.name,
        rules: ch.rules,
      }));
  });
}

/** ClientIP affinity's `ip saddr @affinity-… goto` only matches a client the endpoint chain's
 * `update @affinity-… { ip saddr }` remembered: an endpoint chain without it keeps no client. */
function unremembered(sp: ExpectedServicePort, a: ServiceTree, add: Add, c: PortCheck): void {
  const without = [...a.endpoints, ...(a.localEndpoints ?? [])].filter(
    (e) =>
      e.affinity &&
      !e.chainMissing &&
      !c.table.chain(e.chain)?.rules.some((r) => signature(r).includes('@affinity-')),
  );
  if (without.length === 0) return;
  const named = without.map((e) => e.address ?? e.chain).join(', ');
  add('affinity-wrong', {
    title: `session affinity never remembers a client of ${named}`,
    message: `${sp.name} has sessionAffinity: ClientIP, but on ${c.node} the endpoint chain${without.length === 1 ? '' : 's'} of ${named} ${without.length === 1 ? 'has' : 'have'} no "update @affinity-… { ip saddr }" rule: the Service chain's affinity lookup never finds a client there and every new connection is balanced afresh, so ClientIP affinity is gone.`,
    actual: without.flatMap((e) =>
      // the endpoint chain without the update rule: its other rules as kube-proxy writes them
      (c.table.chain(e.chain)?.rules ?? []).map((r) => ruleAt(c.source, r, true)),
    ),
  });
}

/** What the table does with a connection to an entry it has no element for, and the lines it
 * still holds that say so: a cluster IP still in cluster-ips is rejected by cluster-ips-check (it
 * runs after DNAT, so only an untranslated connection meets it); else it is not translated. */
function remaining(
  e: NftPortPlan['entries'][number],
  c: PortCheck,
  /** Another port's elements lead into its chains: they are quoted instead. */
  moved: boolean,
): { fate: string; lines: (string | Quote)[] } {
  const chain = moved ? undefined : c.table.chain(e.chain);
  const n = chain?.rules.length ?? 0;
  const held = chain ? [`${c.source}: chain ${e.chain} (${n} rule${n === 1 ? '' : 's'})`] : [];
  const refused = e.kind === 'cluster-ip' ? clusterIpRefused(c, e.address) : undefined;
  if (!refused) return { fate: 'are not translated', lines: held };
  return {
    fate: `are rejected: ${e.address} is still in cluster-ips, and cluster-ips-check refuses a new connection to a cluster IP that no service-ips element translated`,
    lines: [...refused, ...held],
  };
}

/** The lines by which the table rejects a new connection to `address` that no service-ips
 * element translated: cluster-ips holds it and cluster-ips-check rejects those (it runs after
 * DNAT); undefined where it does not. */
function clusterIpRefused(c: PortCheck, address: string | undefined): Quote[] | undefined {
  if (!address || !c.table.set('cluster-ips')?.elements.some((x) => x.key[0] === address))
    return undefined;
  const reject = clusterIpsReject(c.table);
  // a base chain leads there (filter-forward, filter-output or filter-output-post-dnat)
  const hook = c.table.chains
    .filter((x) => x.hook)
    .flatMap((x) => x.rules.map((r) => ({ chain: x.name, r })))
    .find(({ r }) => goesTo(r) === 'cluster-ips-check');
  return reject && hook
    ? [
        elementAt(c, 'cluster-ips', [address], undefined, true),
        ruleAt(c.source, hook.r, true),
        ruleAt(c.source, reject, true),
      ]
    : undefined;
}

/** cluster-ips-check's `ip daddr @cluster-ips reject`, in whatever form the table was read. */
const clusterIpsReject = (t: NftTable) =>
  t.chain('cluster-ips-check')?.rules.find((r) => {
    const words = signature(r).split(' ');
    return words.includes('@cluster-ips') && words.includes('reject');
  });

/** One policy chain's endpoints and shares against kube-proxy's. */
function endpoints(
  sp: ExpectedServicePort,
  /** The addresses kube-proxy DNATs to. */
  want: string[],
  got: ServiceTree['endpoints'] | undefined,
  chain: string,
  /** `missing` adds what says a thing is not there: none where a line not read may hold it;
   * `lacking`: the port's script lines the table lacks. */
  { add, missing, lacking }: { add: Add; missing: Add; lacking: () => string[] },
  c: PortCheck,
): void {
  if (!got) {
    missing('service-chain-missing', {
      title: `${chain} missing`,
      message: `kube-proxy's table on ${c.node} has no chain ${chain}, where ${sp.name}'s traffic is load-balanced to its endpoints.`,
    });
    return;
  }
  // the chain's rules that send new connections to an endpoint, as the node holds them
  const rules = c.table.chain(chain)?.rules ?? [];
  const sending = (e: TreeEndpoint) => rulesTo(rules, e).map((r) => ruleAt(c.source, r));
  // the common case, the same endpoints in the same order: none missing nor stale, no sets made
  const same = got.length === want.length && got.every((e, i) => e.address === want[i]);
  const addresses = same ? undefined : new Set(want);
  // an endpoint chain the table lacks is element-chain-missing's, the one root: its name says
  // whose it is, so that endpoint is not said missing as well
  const have = same ? undefined : new Set(got.map((y) => y.address ?? namedEndpoint(y)));
  for (const address of same ? [] : want.filter((x) => !have!.has(x)))
    missing('endpoint-missing', {
      title: `endpoint ${address} missing`,
      message: `${address} is an endpoint of ${sp.name} kube-proxy should send to, but its table on ${c.node} does not: ${c.node}'s kube-proxy has not synced since the endpoint became ready.`,
    });
  // a chain the map sends to that does not DNAT this port's protocol (another Service port's):
  // its share leaves untranslated, as the walk takes it
  const untranslated = same
    ? []
    : got.filter((x) => !x.chainMissing && !dnats(c.table, x.chain, sp));
  for (const e of untranslated) {
    const other = portChain(e.chain)?.name;
    const refused = clusterIpRefused(c, sp.clusterIP);
    add('service-chain-falls-through', {
      title: `${percent(e.probability)} of new connections leave ${chain} untranslated`,
      message: `${chain} on ${c.node} sends ${percent(e.probability)} of ${sp.name}'s new connections to ${e.chain}${other && other !== sp.name ? `, a chain of ${other}` : ''}, whose rules do not DNAT ${sp.protocol}: those connections leave it untranslated${refused ? ` and are rejected by cluster-ips-check (${sp.clusterIP} is in cluster-ips)` : ' and nothing answers them'}.`,
      actual: [
        ...rulesTo(c.table.chain(chain)?.rules ?? [], e).map((r) => ruleAt(c.source, r)),
        // the chain it falls into, another port's, as kube-proxy writes it
        ...(c.table.chain(e.chain)?.rules ?? []).map((r) => ruleAt(c.source, r, true)),
        ...(refused ?? []),
      ],
    });
  }
  for (const e of same
    ? []
    : got.filter((x) => x.address && !addresses!.has(x.address) && !untranslated.includes(x)))
    add('endpoint-stale', {
      ...(e.address ? { endpoint: e.address } : {}),
      title: `DNAT to ${e.address}, no longer an endpoint`,
      message: `kube-proxy's table on ${c.node} still sends ${percent(e.probability)} of ${sp.name} to ${e.address}, which is not an endpoint kube-proxy should use now: those connections go to a Pod that is gone or not ready.`,
      // the rules that send there, as the node holds them
      actual: sending(e),
    });
  for (const e of got.filter((x) => x.chainMissing))
    add('element-chain-missing', {
      expected: lacking(),
      // the rules that send there, as the node holds them
      actual: sending(e),
      title: `${e.chain} missing`,
      message: `${chain} on ${c.node} sends ${sp.name}'s connections to ${e.chain}, which is not in the table: nft refuses such a table, so the paste or listing lacks it, or it was deleted by hand.`,
    });
  for (const e of got.filter((x) => x.affinity && x.probability === 0 && !x.chainMissing))
    missing('endpoint-not-in-numgen', {
      title: `${e.address ?? e.chain} only for clients it already has`,
      message: `${chain} on ${c.node} sends clients remembered in ${e.chain}'s affinity set there, but its numgen map never picks ${e.address ?? 'that endpoint'} for a new client.`,
      actual: sending(e),
    });
  const share = 1 / want.length;
  if (
    got.length === want.length &&
    !got.some((e) => e.affinity && e.probability === 0) &&
    (same || got.every((e) => e.address !== undefined && addresses!.has(e.address))) &&
    got.some((e) => Math.abs(e.probability - share) > 1e-9)
  )
    // the shares are the numgen rule's, which may be a line not read
    missing('weights-uneven', {
      title: `shares ${got.map((e) => percent(e.probability)).join(' / ')}, not ${percent(share)} each`,
      message: `kube-proxy's table on ${c.node} does not split ${sp.name} evenly over its ${want.length} endpoints (numgen random mod ${want.length} gives each ${percent(share)}).`,
      actual: [...new Set(got.flatMap((e) => rulesTo(rules, e)))].map((r) => ruleAt(c.source, r)),
    });
}

/** Whether an endpoint chain DNATs a new connection of the Service port's protocol (walked as
 * the trace walks it); a chain of the Service chain itself (1.36+ inline DNAT) is not walked. */
function dnats(t: NftTable, name: string, sp: ExpectedServicePort): boolean {
  const chain = portChain(name)?.kind === 'endpoint' ? t.chain(name) : undefined;
  if (!chain) return true;
  const v6 = t.family === 'ip6';
  const run = throughChains(t, [chain], {
    src: v6 ? ipv6('2001:db8::1')! : ipv4('192.0.2.1')!,
    dst: v6 ? ipv6('2001:db8::2')! : ipv4('192.0.2.2')!,
    sport: 40000,
    dport: sp.port,
    protocol: sp.protocol as TraceProtocol,
    mark: 0,
    dnat: false,
    snat: false,
  });
  return run === undefined || run.pkt.dnat;
}

/** The endpoint an endpoint chain is named for ("endpoint-HASH-ns/svc/tcp/http__10.0.0.1/80":
 * 10.0.0.1:80), as kube-proxy names it. */
function namedEndpoint(e: ServiceTree['endpoints'][number]): string | undefined {
  const named = portChain(e.chain)?.endpoint;
  const slash = named?.lastIndexOf('/') ?? -1;
  return slash > 0 ? hostPort(named!.slice(0, slash), named!.slice(slash + 1)) : undefined;
}

/** loadBalancerSourceRanges: the firewall-ips elements and the firewall chain's sources. */
function firewall(sp: ExpectedServicePort, fw: string, c: PortCheck, add: Add): void {
  const elements = c.table.set('firewall-ips')?.elements ?? [];
  const unguarded = sp.loadBalancerIPs.filter(
    (ip) =>
      !elements.some(
        (e) => keyText(e) === `${ip} . ${sp.protocol} . ${sp.port}` && e.verdict?.target === fw,
      ),
  );
  const chain = c.table.chain(fw);
  const want = intervalSources(firewallSources(sp, c.exp));
  const got = sources(chain?.rules ?? []);
  if (unguarded.length === 0 && chain && want.join() === got.join()) return;
  add('firewall-missing', {
    title: !chain
      ? `${fw} missing`
      : unguarded.length > 0
        ? `no firewall-ips element for ${unguarded.join(', ')}`
        : `source ranges ${got.join(', ') || 'none'}, not ${want.join(', ')}`,
    message: `${sp.name} accepts only ${sp.sourceRanges.join(', ')} at its load-balancer IP, but kube-proxy's table on ${c.node} ${!chain ? `has no ${fw}` : unguarded.length > 0 ? `does not look ${unguarded.join(', ')} up in firewall-ips` : `lets ${got.join(', ') || 'every source'} through`}: other clients are not dropped.`,
    actual: chain ? chain.rules.map((r) => ruleAt(c.source, r)) : [],
  });
}

/** The addresses and CIDRs a firewall chain's rules let through, as its interval set holds
 * them (kube-proxy adds the load-balancer IP to a range holding the node). */
const sources = (rules: NftRule[]): string[] =>
  intervalSources(rules.flatMap((r) => signature(r).split(' ').filter(isAddress)));
