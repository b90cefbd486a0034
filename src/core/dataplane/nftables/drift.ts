// Drift in nftables mode: the node's Service trees, Service port by Service port, against what
// kube-proxy writes for each (expected/expected-ports.ts, from the model its script is written
// from), then the table's own chains against those of the script (expected/expected.ts, applied
// as nft does). The same finding ids and meanings as iptables mode, plus what only this mode has:
// a map element or jump to a chain the table lacks, and an endpoint chain no numgen map sends new
// connections to.
import {
  lineAt,
  driftFinding,
  isDrift,
  severityOf,
  type AddFinding as Add,
  type DriftFinding,
  type NodeDrift,
} from '../drift.js';
import type { ExpectedRules } from '../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../kube-proxy/service-port.js';
import type { ServiceTrees } from '../trees.js';
import {
  expectedNftCommands,
  expectedNftTable,
  type ExpectedNftScript,
} from './expected/expected.js';
import { nftPortChainNames, nftPortPlans } from './expected/expected-ports.js';
import { unreadAt, type NftTable, type NftUnread } from './read/listing.js';
import { scriptLine, type NftCommand } from './expected/script.js';
import { unreadBearing, unreadNames } from './trees/partial.js';
import { portChain } from './trees/port-chain.js';
import { hairpinElements, type PortCheck } from './drift/context.js';
import { servicePort } from './drift/service-port.js';
import { elementTargets, fixedChains } from './drift/fixed-chains.js';
import { removedServiceElements } from './drift/removed.js';
import { refusedPorts } from './drift/refused.js';
import type { ServicesRead } from '../kube-proxy/removed-services.js';

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
  /** The Services read and the lists read whole; absent: no elements are said a removed Service's. */
  servicesRead?: ServicesRead;
  /** The node's kube-proxy Pod, whose log says why a sync failed (undefined: none in the API). */
  kubeProxyPod?: string | undefined;
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
  const scope = input.scoped ? new Set(exp.servicePorts.map((sp) => sp.name)) : undefined;
  const unread = unreadFor(table, scope);
  const c: PortCheck = {
    node,
    source,
    table,
    exp,
    add,
    script: () => (all ??= linesOf(full().commands)),
    hairpin: hairpinElements(table),
    release: exp.release,
    unread,
    bearing: unreadBearing(unread),
    kubeProxyPod: input.kubeProxyPod,
  };
  for (const [sp, plan] of nftPortPlans(exp.servicePorts, lbIPs))
    servicePort(
      sp,
      plan,
      got.get(sp.name),
      (only = (x) => x) => linesOf(only(full().ports.get(sp) ?? [])),
      c,
    );
  fixedChains(want, c);
  // a port with an error already says why its packets go astray: not walked again
  const flagged = new Set(
    findings.flatMap((f) => (f.service && severityOf(f) === 'error' ? [f.service] : [])),
  );
  refusedPorts(c, input.serviceCIDRs, flagged);
  elementTargets(c, scope);
  // a chain some current Service port has is not left over, even where nothing leads to it; nor
  // is one a line not read may lead to
  let ports: Map<string, ExpectedServicePort> | undefined; // made for the first orphan only
  const current = (chain: string) => {
    ports ??= new Map(exp.servicePorts.map((sp) => [sp.name, sp]));
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
  if (!input.scoped && input.servicesRead)
    removedServiceElements(
      { node, source, table, ports: exp.servicePorts, read: input.servicesRead, add },
      input.trees.services,
    );
  return {
    node,
    source,
    mode: 'nftables',
    tables: [`${table.family} ${table.name}`],
    servicePorts: exp.servicePorts.length,
    ...(exp.writtenBy ? { writtenBy: exp.writtenBy } : {}),
    // said only where a release was read for the node to check the table against: null, they agree
    ...(exp.requested ? { releaseDisagrees: exp.releaseDisagrees ?? null } : {}),
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
