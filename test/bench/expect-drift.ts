// expect + drift for node-a of the N-Service cluster, under 1 s whatever release it models: the
// rules kube-proxy should have written, from the API objects, compared with the node's parsed
// rules (parsing is timed apart). iptables as the newest and the oldest modelled release write
// them, and as kube-proxy v1.20 spelled them (a release kdebug does not model: compared by
// behaviour, each Service port's packets walked); nftables as its newest and oldest modelled
// release write it; IPVS mode as the newest writes it (virtual servers, ipsets, kube-ipvs0 and
// its iptables rules; drift reckons what IPVS programs from expect's model, as kdebug does).
import {
  expectedRules,
  type ExpectOptions,
  type ExpectedRules,
} from '../../src/core/dataplane/kube-proxy/expected.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { nftablesDrift } from '../../src/core/dataplane/nftables/drift.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import {
  NEWEST_MODELLED,
  OLDEST_MODELLED,
  watchedServiceCIDRs,
  type Release,
} from '../../src/core/dataplane/kube-proxy/releases.js';
import { clusterView, serviceCIDRs, type ClusterView } from '../../src/core/kube/objects.js';
import { severityOf, type DriftFinding } from '../../src/core/dataplane/drift.js';
import {
  clusterDump,
  clusterObjects,
  NODE,
  olderSpelling,
  type DumpShape,
} from './cluster-dump.js';
import { mean, median, ms, timed } from './measure.js';
import { nftClusterScript } from './nft-dump.js';
import { ipvsState, NODE_ADDRESSES, type IpvsState } from './ipvs-dump.js';
import { expectedIpvs } from '../../src/core/dataplane/ipvs/expected/expected.js';
import { ipvsDrift } from '../../src/core/dataplane/ipvs/drift/drift.js';
import { parseIpsets } from '../../src/core/dataplane/ipvs/read/ipset.js';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';

interface Case {
  name: string;
  /** What expect is asked for (the release the node's version names). */
  options: ExpectOptions;
  /** The node's rules as that kube-proxy wrote them, made once. */
  rules: () => string;
  /** Reads the rules (untimed, anew each run, as each run of kdebug does) and returns the drift
   * of them against `exp` (timed). */
  read: (rules: string) => (exp: ExpectedRules, view: ClusterView) => DriftFinding[];
  /** The findings a clean table gives: none, or the one folded spelling note. */
  wanted: string;
}

const newest: Release = { minor: NEWEST_MODELLED };
const oldest: Release = { minor: OLDEST_MODELLED };
/** nftables mode is beta, on by default, from 1.31. */
const oldestNft: Release = { minor: 31 };

const iptables = (text: string) => {
  const actual = parseIptables(text);
  return (exp: ExpectedRules, view: ClusterView) =>
    nodeDrift({ node: NODE, source: 'bench', expected: exp, actual, view }).findings;
};

const nftables = (script: string) => {
  const table = parseNftScript(script).tables[0]!;
  return (exp: ExpectedRules, view: ClusterView) => {
    // the trees of the node's table are drift's input, built as the analysis builds them
    const lbIPs = new Set(view.services.flatMap((s) => s.loadBalancerIPs));
    const trees = buildNftServiceTrees(table, { loadBalancerIPs: lbIPs });
    return nftablesDrift({
      node: NODE,
      source: 'bench',
      expected: exp,
      serviceCIDRs: watchedServiceCIDRs(exp.release, serviceCIDRs(view)),
      table,
      trees,
      scoped: false,
    }).findings;
  };
};

const ipvs = (json: string) => {
  const state = JSON.parse(json) as IpvsState;
  const table = parseIpvs(state.ipvsadm, 'ipvsadm-save.txt');
  const ipsets = parseIpsets(state.ipsets, 'ipset-save.txt');
  const ruleset = parseIptables(state.iptables);
  return (exp: ExpectedRules) =>
    ipvsDrift({
      node: NODE,
      source: 'ipvsadm-save.txt',
      // what IPVS programs is reckoned from the model inside drift, as the dataplane does
      expected: expectedIpvs(exp, { nodeAddresses: NODE_ADDRESSES }),
      table,
      ipsets,
      ipsetsSource: 'ipset-save.txt',
      bound: new Set(state.bound),
      iptables: { ruleset, source: 'iptables-save.txt' },
      localEndpoints: new Set(
        exp.servicePorts.flatMap((sp) =>
          sp.allEndpoints.filter((e) => e.local).map((e) => e.address),
        ),
      ),
      scoped: false,
      listed: { kind: 'none' },
    }).findings;
};

const cases = (shape: DumpShape): Case[] => [
  {
    name: `iptables, v1.${newest.minor}`,
    options: {},
    rules: () => clusterDump(shape),
    read: iptables,
    wanted: '0 findings',
  },
  {
    name: `iptables, v1.${oldest.minor}`,
    options: { release: oldest },
    rules: () => clusterDump(shape, oldest),
    read: iptables,
    wanted: '0 findings',
  },
  {
    name: 'iptables, spelled by v1.20 (compared by behaviour)',
    options: { release: { minor: 20 } },
    rules: () => olderSpelling(clusterDump(shape, oldest)),
    read: iptables,
    wanted: '1 finding: info rule-text-differs',
  },
  {
    name: `nftables, v1.${newest.minor}`,
    options: { release: newest },
    rules: () => nftClusterScript(shape, newest),
    read: nftables,
    wanted: '0 findings',
  },
  {
    name: `nftables, v1.${oldestNft.minor}`,
    options: { release: oldestNft },
    rules: () => nftClusterScript(shape, oldestNft),
    read: nftables,
    wanted: '0 findings',
  },
  {
    name: `IPVS, v1.${newest.minor}`,
    options: { release: newest },
    rules: () => JSON.stringify(ipvsState(shape, newest)),
    read: ipvs,
    wanted: '0 findings',
  },
];

/** One line per case (those whose name holds `only`): the median expect + drift of `runs`, the
 * wall and CPU means of the two together, and the findings it gave. */
export function benchExpectDrift(shape: DumpShape, runs: number, only?: string): void {
  const objects = clusterObjects(shape);
  for (const c of cases(shape)) {
    if (only && !c.name.includes(only)) continue;
    const rules = c.rules();
    const expect: { wall: number; cpu: number }[] = [];
    const compare: { wall: number; cpu: number }[] = [];
    let found: DriftFinding[] = [];
    // a case over ten seconds a run says its median in three: the bench stays minutes long
    for (let i = 0; i < runs && !(i >= 3 && median(compare.map((x) => x.wall)) > 10_000); i++) {
      const drift = c.read(rules);
      let view = clusterView([]);
      let exp = expectedRules(view, NODE);
      expect.push(
        timed(() => {
          view = clusterView(objects);
          exp = expectedRules(view, NODE, c.options);
        }),
      );
      compare.push(timed(() => (found = drift(exp, view))));
    }
    const wall = expect.map((e, i) => e.wall + compare[i]!.wall);
    const cpu = expect.map((e, i) => e.cpu + compare[i]!.cpu);
    const findings = `${found.length} finding${found.length === 1 ? '' : 's'}${found.length ? `: ${found.map((f) => `${severityOf(f)} ${f.id}`).join(', ')}` : ''}`;
    console.log(
      `expect + drift, ${c.name}: ${ms(median(expect.map((x) => x.wall)))} + ${ms(median(compare.map((x) => x.wall)))} = ${ms(median(wall))}; best ${ms(Math.min(...wall))}; mean ${ms(mean(wall))} wall, ${ms(mean(cpu))} CPU for ${shape.services} Services on ${NODE} (target < 1000 ms; ${findings}, ${c.wanted} expected)`,
    );
  }
}
