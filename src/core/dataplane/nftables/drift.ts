// Drift in nftables mode: the node's Service trees, Service port by Service port, against what
// kube-proxy writes for each (expected/expected-ports.ts, from the model its script is written
// from), then the table's own chains against those of the script (expected/expected.ts, applied
// as nft does). The same finding ids and meanings as iptables mode, plus what only this mode has:
// a map element or jump to a chain the table lacks, and an endpoint chain no numgen map sends new
// connections to.
import { kubeProxyPodOn } from '../iptables/drift/context.js';
import { hostPort } from '../../ipv6.js';
import {
  lineAt,
  driftFinding,
  isDrift,
  type AddFinding as Add,
  type DriftFinding,
  type DriftId,
  type NodeDrift,
} from '../drift.js';
import type { ExpectedRules } from '../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../kube-proxy/service-port.js';
import { percent } from '../../model.js';
import { writes, type Release } from '../kube-proxy/releases.js';
import type { EntryPoint, ServiceTree, ServiceTrees } from '../trees.js';
import { entriesAt, entriesElsewhere, notInApi } from '../stale-entries.js';
import {
  expectedNftCommands,
  expectedNftTable,
  type ExpectedNftScript,
} from './expected/expected.js';
import { firewallSources } from './expected/port-script.js';
import {
  intervalSources,
  nftPortChainNames,
  nftPortPlans,
  type NftPortPlan,
} from './expected/expected-ports.js';
import {
  unreadAt,
  type NftExpr,
  type NftRule,
  type NftTable,
  type NftUnread,
} from './read/listing.js';
import { ruleText } from './render.js';
import { scriptLine, type NftCommand } from './expected/script.js';
import { portChain, unreadBearing, unreadNames } from './trees.js';

export interface NftDriftInput {
  node: string;
  /** "nodes/NODE/nft-ip-kube-proxy.txt" */
  source: string;
  expected: ExpectedRules;
  serviceCIDRs: string[];
  table: NftTable;
  trees: ServiceTrees;
  /** Only the Service ports of `expected` (one Service's answer): no orphan chains. */
  scoped: boolean;
}

export function nftablesDrift(input: NftDriftInput): NodeDrift {
  const { node, source, expected: exp, table } = input;
  const findings: DriftFinding[] = [];
  const add: Add = (id, f) => findings.push(driftFinding(id, f, { node, source }));
  // the chains every sync writes, as a table; each Service port's part is compared by its plan,
  // and its script lines are evidence, written only for a finding
  const want = expectedNftTable(expectedNftCommands(exp, input.serviceCIDRs, { fixedOnly: true }));
  let script: ExpectedNftScript | undefined;
  const full = () => (script ??= expectedNftCommands(exp, input.serviceCIDRs));
  const linesOf = (commands: NftCommand[]) => commands.map((x) => scriptLine(x, want.family));
  let all: string[] | undefined; // the whole script's lines, printed once if any finding quotes them
  const lbIPs = new Set(exp.servicePorts.flatMap((sp) => sp.loadBalancerIPs));
  const got = byName(input.trees);
  const hairpin = new Set(table.set('hairpin-connections')?.elements.map(keyText) ?? []);
  const scope = input.scoped ? new Set(exp.servicePorts.map((sp) => sp.name)) : undefined;
  const unread = unreadFor(table, scope);
  const c: PortCheck = {
    node,
    source,
    table,
    exp,
    add,
    script: () => (all ??= linesOf(full().commands)),
    hairpin,
    release: exp.release,
    unread,
    bearing: unreadBearing(unread),
  };
  for (const [sp, plan] of nftPortPlans(exp.servicePorts, lbIPs))
    servicePort(sp, plan, got.get(sp.name), () => linesOf(full().ports.get(sp) ?? []), c);
  fixedChains(want, c);
  elementTargets(c, scope);
  // a chain some current Service port has is not left over, even where nothing leads to it; nor
  // is one a line not read may lead to
  const ports = new Map(exp.servicePorts.map((sp) => [sp.name, sp]));
  const current = (chain: string) => {
    const sp = ports.get(portChain(chain)!.name);
    return sp !== undefined && nftPortChainNames(sp, exp).has(chain);
  };
  if (!input.scoped)
    for (const o of input.trees.orphans.filter(
      (x) => x.rules > 0 && !current(x.chain) && !c.bearing(portChain(x.chain)!.name),
    ))
      add('orphan-chain', {
        title: `${o.chain} is left over`,
        message: `kube-proxy's table on ${node} has ${o.chain} with ${o.rules} rule${o.rules === 1 ? '' : 's'}, which no map element or rule leads to and no current Service port needs: kube-proxy flushes a stale chain at once, so one with rules was not written by this kube-proxy's last sync.`,
        actual: [`${source}: chain ${o.chain}`],
      });
  return {
    node,
    source,
    tables: [`${table.family} ${table.name}`],
    servicePorts: exp.servicePorts.length,
    findings,
    ...(unread.length > 0 ? { notRead: [unreadNote(node, source, unread)] } : {}),
    drifted: findings.some(isDrift),
  };
}

/** The lines of the listing not read that a comparison of these Service ports (of the whole
 * table: none given) may rest on: those naming one of them, and those of a chain or set every
 * Service passes through (which name none). */
export function unreadFor(table: NftTable, ports?: ReadonlySet<string>): NftUnread[] {
  return (table.unread ?? []).filter((u) => {
    if (!ports) return true;
    const named = unreadNames(u);
    return named ? [...named].some((n) => ports.has(n)) : u.block !== undefined;
  });
}

/** The note that says which lines were not read, and that nothing they may hold was compared. */
function unreadNote(node: string, source: string, unread: NftUnread[]): DriftFinding {
  const one = unread.length === 1;
  return driftFinding(
    'table-not-captured',
    {
      title: `${unread.length} line${one ? '' : 's'} of the listing not read`,
      message: `${one ? 'A line' : `${unread.length} lines`} of ${node}'s listing ${one ? 'is' : 'are'} not what nft prints there, so what ${one ? 'it holds was' : 'they hold was'} not compared and nothing ${one ? 'it' : 'they'} may hold is said missing: ${unread.map((u) => unreadAt(source, u)).join('; ')}.`,
      actual: unread.map((u) => lineAt(source, u.line, u.text)),
    },
    { node, source },
  );
}

const byName = (t: ServiceTrees) => new Map(t.services.map((x) => [x.name, x]));

interface PortCheck {
  node: string;
  source: string;
  table: NftTable;
  exp: ExpectedRules;
  add: Add;
  /** The script's lines, printed when a finding quotes them. */
  script: () => string[];
  hairpin: Set<string>;
  release: Release;
  /** The lines of the listing not read that this comparison may rest on. */
  unread: NftUnread[];
  /** The first of them a Service port's comparison may rest on. */
  bearing: (service: string) => NftUnread | undefined;
}

const keyText = (e: { key: (string | number)[] }) => e.key.join(' . ');

/** A map element as read, in nft's words: "service-ips 10.96.0.1 . tcp . 443 : goto CHAIN". */
const elementLine = (source: string, x: EntryPoint) =>
  `${source}: ${x.from} ${x.address === undefined ? '' : `${x.address} . `}${x.protocol} . ${x.port} : goto ${x.chain}`;

/** One Service port: its entries, no-endpoint verdicts, endpoints and shares, affinity,
 * external-chain masquerade, firewall and hairpin, the node's against kube-proxy's. */
function servicePort(
  sp: ExpectedServicePort,
  w: NftPortPlan,
  a: ServiceTree | undefined,
  /** The script lines kube-proxy writes for this port: each finding's `expected`. */
  expected: () => string[],
  c: PortCheck,
): void {
  const { node, source, table } = c;
  const add: Add = (id, f) => c.add(id, { service: sp.name, expected: expected(), ...f });
  // what a line not read may hold of this port is not said missing: only what was read differs
  const blind = c.bearing(sp.name) !== undefined;
  const missing: Add = (id, f) => {
    if (!blind) add(id, f);
  };
  // the log of kube-proxy on the node says why its sync failed
  const sync = {
    notSynced: true as const,
    advice: `kube-proxy on ${node} has not written the current state: its log says why.`,
    next: kubeProxyPodOn(node),
  };
  let entryWrong = false;

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
      missing(e.kind === 'node-port' ? 'nodeport-missing' : 'service-rules-missing', {
        title: `no ${e.from} element for ${sp.name} (${where})`,
        message: `kube-proxy's table on ${node} has no ${e.from} element for ${sp.name}'s ${e.kind} ${where}, although the Service has endpoints: connections to it from ${node} are not translated${moved.length > 0 ? `; its elements for ${entriesAt(moved)} lead into the Service port's chains instead, ${notInApi(want, moved)}` : ''}.`,
        ...(moved.length > 0 ? { actual: moved.map((x) => elementLine(source, x)) } : {}),
        ...sync,
      });
    } else if (!table.chain(found.chain))
      entryWrong = true; // element-chain-missing, from elementTargets
    else if (found.chain !== e.chain) {
      entryWrong = true;
      const local = /^local-/.test(found.chain) !== /^local-/.test(e.chain);
      add(local ? 'local-policy-wrong' : 'service-chain-missing', {
        title: `${where} goes to ${found.chain}, not ${e.chain}`,
        message: `kube-proxy's table on ${node} sends ${sp.name}'s ${e.kind} ${where} to ${found.chain}; for the Service's traffic policies kube-proxy sends it to ${e.chain}.`,
        actual: [`${source}: ${found.from} ${where} : goto ${found.chain}`],
        ...sync,
      });
    }
  }

  for (const v of w.verdicts) {
    const where = v.address ? hostPort(v.address, v.port ?? '') : `node port ${v.port}`;
    const found = a?.verdicts.find(
      (x) => x.chain === v.chain && x.address === v.address && x.port === v.port,
    );
    if (found?.kind === v.kind) continue;
    (found ? add : missing)('no-endpoints-reject-missing', {
      title: `no ${v.kind} for ${sp.name} at ${where}`,
      message:
        v.kind === 'reject'
          ? `${sp.name} has no endpoints, but kube-proxy's table on ${node} has no ${v.chain} element rejecting ${where}: connections to it hang until they time out instead of being refused.`
          : `${sp.name} has no endpoint on ${node} for this traffic (a Local traffic policy), but kube-proxy's table there has no ${v.chain} element dropping ${where}${found ? ` (it ${found.kind}s it)` : ''}.`,
      actual: found ? [`${source}: ${v.chain} ${where} : ${found.kind}`] : [],
    });
  }
  // an entry sent into a chain although kube-proxy would drop or reject it there
  for (const x of a?.entries ?? [])
    if (
      !w.entries.some((e) => e.address === x.address && e.port === x.port && e.kind === x.kind) &&
      w.verdicts.some((v) => v.address === x.address && v.port === x.port)
    )
      add('endpoint-stale', {
        title: `${x.address ?? 'node port'}:${x.port} still goes to ${x.chain}`,
        message: `kube-proxy's table on ${node} still sends ${sp.name}'s ${x.kind} ${x.address ?? ''}:${x.port} to ${x.chain}, but ${sp.name} has no endpoint for it now: those connections go to Pods that are gone or not ready.`,
        actual: [elementLine(source, x)],
      });

  if (a && !entryWrong) {
    if (w.chains.svc)
      endpoints(
        sp,
        w.endpoints,
        a.chains.svc ? a.endpoints : undefined,
        w.chains.svc,
        { add, missing },
        c,
      );
    if (w.chains.svl)
      endpoints(
        sp,
        w.localEndpoints,
        a.chains.svl ? (a.localEndpoints ?? []) : undefined,
        w.chains.svl,
        { add, missing },
        c,
      );
    if (w.affinitySeconds !== a.affinitySeconds)
      (a.affinitySeconds === undefined ? missing : add)('affinity-wrong', {
        title: `session affinity ${a.affinitySeconds === undefined ? 'missing' : `${a.affinitySeconds}s`}, not ${w.affinitySeconds === undefined ? 'none' : `${w.affinitySeconds}s`}`,
        message: `${sp.name} has ${w.affinitySeconds === undefined ? 'no session affinity' : `sessionAffinity ClientIP for ${w.affinitySeconds}s`}, but kube-proxy's table on ${node} ${a.affinitySeconds === undefined ? 'keeps no affinity sets for it' : `keeps clients for ${a.affinitySeconds}s`}.`,
      });
    for (const m of w.externalMasquerade)
      if (!a.masquerade.some((x) => x.chain === a.chains.ext && x.condition === m))
        missing('masquerade-missing', {
          title: `no masquerade mark in ${w.chains.ext}${m === 'all' ? '' : ` for ${m}`}`,
          message: `kube-proxy's table on ${node} does not mark ${sp.name}'s external traffic${m === 'all' ? '' : ` (${m})`} for masquerade: replies from an endpoint on another node go straight back to the client, which drops them.`,
          actual: (table.chain(w.chains.ext!)?.rules ?? []).map((r) => `${source}: ${ruleText(r)}`),
        });
  }
  if (w.chains.fw) firewall(sp, w.chains.fw, c, missing);
  // before 1.36 each endpoint chain marks its own hairpin traffic: no hairpin-connections set
  const hairpins = writes(c.release, 'nftInlineMasquerade') ? sp.reachableEndpoints : [];
  for (const ep of hairpins.filter((e) => e.local)) {
    const key = `${ep.ip} . ${ep.ip} . ${sp.protocol} . ${ep.port}`;
    if (c.hairpin.has(key)) continue;
    c.hairpin.add(key); // one finding per element
    missing('masquerade-missing', {
      title: `${ep.address} not in hairpin-connections`,
      message: `${ep.address} is a local endpoint of ${sp.name}, but kube-proxy's table on ${node} has no hairpin-connections element for it: a Pod reaching itself through the Service gets replies from its own address and drops them.`,
    });
  }
}

/** One policy chain's endpoints and shares against kube-proxy's. */
function endpoints(
  sp: ExpectedServicePort,
  /** The addresses kube-proxy DNATs to. */
  want: string[],
  got: ServiceTree['endpoints'] | undefined,
  chain: string,
  /** `missing` adds what says a thing is not there: none where a line not read may hold it. */
  { add, missing }: { add: Add; missing: Add },
  c: PortCheck,
): void {
  if (!got) {
    missing('service-chain-missing', {
      title: `${chain} missing`,
      message: `kube-proxy's table on ${c.node} has no chain ${chain}, where ${sp.name}'s traffic is load-balanced to its endpoints.`,
    });
    return;
  }
  const addresses = new Set(want);
  const have = new Set(got.map((y) => y.address));
  for (const address of want.filter((x) => !have.has(x)))
    missing('endpoint-missing', {
      title: `endpoint ${address} missing`,
      message: `${address} is an endpoint of ${sp.name} kube-proxy should send to, but its table on ${c.node} does not: ${c.node}'s kube-proxy has not synced since the endpoint became ready.`,
    });
  for (const e of got.filter((x) => x.address && !addresses.has(x.address)))
    add('endpoint-stale', {
      ...(e.address ? { endpoint: e.address } : {}),
      title: `DNAT to ${e.address}, no longer an endpoint`,
      message: `kube-proxy's table on ${c.node} still sends ${percent(e.probability)} of ${sp.name} to ${e.address}, which is not an endpoint kube-proxy should use now: those connections go to a Pod that is gone or not ready.`,
      actual: [`${c.source}: ${e.chain}`],
    });
  for (const e of got.filter((x) => x.chainMissing))
    add('element-chain-missing', {
      title: `${e.chain} missing`,
      message: `${chain} on ${c.node} sends ${sp.name}'s connections to ${e.chain}, which is not in the table: nft refuses such a table, so the paste or listing lacks it, or it was deleted by hand.`,
    });
  for (const e of got.filter((x) => x.affinity && x.probability === 0 && !x.chainMissing))
    missing('endpoint-not-in-numgen', {
      title: `${e.address ?? e.chain} only for clients it already has`,
      message: `${chain} on ${c.node} sends clients remembered in ${e.chain}'s affinity set there, but its numgen map never picks ${e.address ?? 'that endpoint'} for a new client.`,
      actual: [`${c.source}: ${e.chain}`],
    });
  const share = 1 / want.length;
  if (
    got.length === want.length &&
    !got.some((e) => e.affinity && e.probability === 0) &&
    got.every((e) => e.address !== undefined && addresses.has(e.address)) &&
    got.some((e) => Math.abs(e.probability - share) > 1e-9)
  )
    // the shares are the numgen rule's, which may be a line not read
    missing('weights-uneven', {
      title: `shares ${got.map((e) => percent(e.probability)).join(' / ')}, not ${percent(share)} each`,
      message: `kube-proxy's table on ${c.node} does not split ${sp.name} evenly over its ${want.length} endpoints (numgen random mod ${want.length} gives each ${percent(share)}).`,
      actual: got.map((e) => `${c.source}: ${percent(e.probability)} -> ${e.address} (${e.chain})`),
    });
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
    actual: chain ? chain.rules.map((r) => `${c.source}: ${ruleText(r)}`) : [],
  });
}

/** The addresses and CIDRs a firewall chain's rules let through, as its interval set holds
 * them (kube-proxy adds the load-balancer IP to a range holding the node). */
const sources = (rules: NftRule[]): string[] =>
  intervalSources(rules.flatMap((r) => signature(r).split(' ').filter(isAddress)));

/** Which finding a difference in one of the table's fixed chains is. */
const FIXED_ID: Record<string, DriftId> = {
  services: 'entry-jump-missing',
  masquerading: 'masquerade-missing',
  'cluster-ips-check': 'no-endpoints-reject-missing',
  'service-endpoints-check': 'no-endpoints-reject-missing',
  'nodeport-endpoints-check': 'no-endpoints-reject-missing',
  'reject-chain': 'no-endpoints-reject-missing',
  'firewall-check': 'firewall-missing',
};

/** The chains every sync writes (base chains, dispatch, masquerading, the checks): each rule
 * kube-proxy writes there, by what it matches and where it goes, and each base chain's hook;
 * the node-port addresses. */
function fixedChains(want: NftTable, c: PortCheck): void {
  // a chain or set with a line not read may hold what it seems to lack
  const blind = (kind: string, name: string) =>
    c.unread.some((u) => u.block?.kind === kind && u.block.name === name);
  for (const w of want.chains) {
    if (portChain(w.name)) continue;
    const a = c.table.chain(w.name);
    const id = FIXED_ID[w.name] ?? (w.hook ? 'entry-jump-missing' : 'no-endpoints-reject-missing');
    const hook = (x: typeof w) =>
      x.hook ? `type ${x.type} hook ${x.hook} priority ${x.prio}` : '';
    const unseen = blind('chain', w.name);
    if (!a || (hook(a) !== hook(w) && !(unseen && !a.hook))) {
      c.add(id, {
        title: !a ? `chain ${w.name} missing` : `${w.name} hooked as ${hook(a) || 'no base chain'}`,
        message: `kube-proxy's table on ${c.node} ${!a ? `has no chain ${w.name}` : `has ${w.name} as ${hook(a) || 'a regular chain'}, not ${hook(w)}`}: what it does for every Service is not done there.`,
        expected: c.script().filter((l) => l.includes(` ${w.name} `)),
      });
      continue;
    }
    if (unseen) continue;
    const have = a.rules.map(signature);
    for (const r of w.rules) {
      const s = signature(r);
      const i = have.indexOf(s);
      if (i >= 0) {
        have.splice(i, 1);
        continue;
      }
      const masq = w.name === 'services' && /\bmangle\b/.test(s);
      c.add(masq ? 'masquerade-missing' : id, {
        title: `${w.name}: no rule ${ruleText(r)}`,
        message: `kube-proxy's table on ${c.node} lacks the rule "${ruleText(r)}" in ${w.name}${masq ? ': cluster IP traffic from outside the cluster is not masqueraded' : ''}.`,
        expected: [`add rule ${want.family} kube-proxy ${w.name} ${ruleText(r)}`],
        actual: a.rules.map((x) => `${c.source}: ${w.name}: ${ruleText(x)}`),
      });
    }
  }
  const wantIPs = (want.set('nodeport-ips')?.elements ?? []).map(keyText);
  const gotIPs = new Set((c.table.set('nodeport-ips')?.elements ?? []).map(keyText));
  if (blind('set', 'nodeport-ips')) return;
  for (const ip of wantIPs.filter((x) => !gotIPs.has(x)))
    c.add('nodeport-missing', {
      title: `node ports not answered on ${ip}`,
      message: `kube-proxy's table on ${c.node} has no nodeport-ips element ${ip}: no Service's node port answers on that address.`,
      expected: [`add element ${want.family} kube-proxy nodeport-ips { ${ip} }`],
    });
}

/** Map elements whose chain the table lacks (nft itself refuses to load such a table). */
function elementTargets(c: PortCheck, only: Set<string> | undefined): void {
  for (const map of ['service-ips', 'service-nodeports', 'firewall-ips'])
    for (const e of c.table.set(map)?.elements ?? []) {
      const target = e.verdict?.target;
      const port = target ? portChain(target) : undefined;
      if (!target || c.table.chain(target) || (only && !(port && only.has(port.name)))) continue;
      c.add('element-chain-missing', {
        ...(port ? { service: port.name } : {}),
        title: `${map} sends ${keyText(e)} to ${target}, which is missing`,
        message: `kube-proxy's table on ${c.node} has the ${map} element ${keyText(e)} : goto ${target}, but no chain ${target}: nft refuses such a table, so the paste or listing lacks it, or it was deleted by hand.`,
        actual: [`${c.source}: ${map} ${keyText(e)} : goto ${target}`],
      });
    }
}

/**
 * What a rule matches and does, the same whether it was read from nft's JSON, its listing or a
 * script: the sets it looks up, the addresses and CIDRs it names, its statements and verdicts.
 */
function signature(r: NftRule): string {
  const out: string[] = [];
  const walk = (v: unknown, key?: string): void => {
    if (typeof v === 'string') {
      if (key === 'text') out.push(...words(v));
      else if (v.startsWith('@') || isAddress(v)) out.push(v);
      else if (key === 'target') out.push(`> ${v}`);
    } else if (Array.isArray(v)) v.forEach((x) => walk(x));
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (o['prefix'] && typeof o['prefix'] === 'object') {
        const p = o['prefix'] as { addr: string; len: number };
        out.push(`${p.addr}/${p.len}`);
        return;
      }
      for (const [k, x] of Object.entries(o)) {
        if (STATEMENTS.has(k)) out.push(k);
        walk(x, k);
      }
    }
  };
  r.expr.forEach((e: NftExpr) => walk(e));
  return out.sort().join(' ');
}

const STATEMENTS = new Set([
  'masquerade',
  'reject',
  'drop',
  'accept',
  'mangle',
  'dnat',
  'vmap',
  'fib',
]);

/** The signature words of a rule kept as text: sets, addresses, statements. */
function words(text: string): string[] {
  const out: string[] = [];
  const all = text.replace(/[{},]/g, ' ').split(/\s+/);
  all.forEach((w, i) => {
    if (w.startsWith('@') || isAddress(w)) out.push(w);
    // "ct status dnat" matches a connection's state: not the dnat statement
    else if (STATEMENTS.has(w) && all[i - 1] !== 'status') out.push(w);
    else if (w === 'set' && all[i - 1] === 'mark') out.push('mangle');
  });
  return out;
}

const isAddress = (w: string) =>
  /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(w) ||
  (/^[0-9a-f:]+(\/\d+)?$/i.test(w) && w.includes(':') && /[0-9a-f]/i.test(w));
