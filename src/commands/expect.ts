// `kdebug expect`: the rules kube-proxy would write on one node, as iptables-save text (iptables
// mode), as the nft -f script of its table (nftables mode), or as its virtual servers, ipsets and
// kube-ipvs0 addresses (IPVS mode); where Cilium replaces kube-proxy, what its agent should hold,
// as the agent lists it.
import { watchedServiceCIDRs } from '../core/dataplane/kube-proxy/releases.js';
import { Analysis } from '../core/nodes/analysis.js';
import { versionRead, versionReadText, type NodeState } from '../core/nodes/state.js';
import { expectedSave, type ExpectedRules } from '../core/dataplane/kube-proxy/expected.js';
import type { NodeKnobs } from '../core/dataplane/kube-proxy/knobs.js';
import { expectedIpvs, expectedIpvsText } from '../core/dataplane/ipvs/expected/expected.js';
import { expectedNftText } from '../core/dataplane/nftables/expected/expected.js';
import { expectedCiliumText } from '../core/dataplane/cilium/expected/render.js';
import { startKnown } from '../core/dataplane/cilium/agent/refused.js';
import { settingsSaid, settingsStated } from '../core/dataplane/cilium/agent/provenance.js';
import { familyOf, type IPFamily } from '../core/ipv6.js';
import { serviceCIDRs, type ClusterView } from '../core/kube/objects.js';
import { pickNodes, readFacts, type SourceFlags } from '../cluster/facts-source.js';
import { expectDoc } from '../output/expect.js';
import {
  EXIT,
  format,
  sourceContext,
  textWidth,
  UsageError,
  write,
  writeDoc,
  type GlobalOptions,
} from './common/io.js';
import { wrapComments } from '../output/wrap.js';
import { withExamples, type Define } from './common/flags.js';
import { selfCommand } from './common/invocation.js';
import { Option } from 'commander';

export interface ExpectOptions extends SourceFlags {
  table?: 'nat' | 'filter';
  /** ipv4 (iptables-save), ipv6 (ip6tables-save) or both; default the cluster's primary family. */
  family?: 'ipv4' | 'ipv6' | 'both';
  randomFully: boolean;
  nfacct?: boolean;
  tcpBeLiberal?: boolean;
}

export async function expectCommand(o: ExpectOptions, g: GlobalOptions): Promise<number> {
  const shown = format(g, 'expect');
  const { facts, view, code, label } = await readFacts(o, sourceContext(g), { rules: false });
  const [name] = pickNodes(facts, label, o, 'known');
  const analysis = new Analysis(facts, { view, code });
  const node = analysis.node(name!);
  const mode = node.mode();
  const state = analysis.state(name!);
  const agent = state.cilium;
  // a Cilium node's settings, typed with their sources, beside the header that says them
  const settings = mode === 'cilium' && agent ? { settings: settingsStated(agent) } : {};
  // -o json: the same text, in a document naming the node and mode (schema/expect.v1.json)
  const print = (text: string) => {
    if (shown === 'json') writeDoc(expectDoc(text, { node: name!, mode, ...settings }));
    else write(wrapComments(text, textWidth().width));
  };
  if (mode === 'cilium' && agent) {
    const read = node.stateRead();
    const listed = read !== undefined && !read.failure;
    print(
      expectedCiliumText(node.ciliumExpected() ?? [], node.ciliumMaps() ?? [], {
        node: name!,
        agent: `${agent.pod.namespace}/${agent.pod.name}`,
        ...(agent.version ? { version: agent.version } : {}),
        settings: settingsSaid(agent),
        ...(agent.nodePorts ? { nodePorts: agent.nodePorts } : {}),
        ...(agent.refused ? { refused: agent.refused } : {}),
        // as drift decides it: nothing of it listed and not ready, it has not started
        notStarted: node.agentNotStarted() !== undefined,
        startUnknown: !startKnown(agent, listed),
        sourceRangeCheck: agent.settings.sourceRangeCheck,
        notKnown: agent.settings.notKnown,
        ...(agent.replacement ? { replacement: agent.replacement } : {}),
      }),
    );
    return EXIT.ok;
  }
  // a Cilium node with no agent Pod in the API: no kube-proxy rules, nor an agent to model
  if (mode === 'cilium')
    throw new UsageError(
      `node ${name}: Cilium handles its Services, but the API holds no Cilium agent Pod there; expect models an agent's table from its Pod and configuration (${selfCommand('svc')} says what was recorded there)`,
    );
  // the rules of another mode would be kube-proxy's in no sense: say so rather than print them
  if (mode !== 'iptables' && mode !== 'nftables' && mode !== 'ipvs')
    throw new UsageError(
      `node ${name}: kube-proxy runs in ${mode} mode; expect prints what the iptables, nftables and IPVS modes write only (${selfCommand('rules')} reads what it can of it)`,
    );
  if (mode !== 'iptables' && o.table)
    throw new UsageError(
      `node ${name}: kube-proxy runs in ${mode === 'ipvs' ? 'IPVS mode, where its Services are virtual servers' : 'nftables mode, where its rules are one table (ip kube-proxy)'}: --table names an iptables table`,
    );
  // a flag given on the command line wins over what the node's recordings tell
  const flags = {
    ...(o.randomFully === false ? { randomFully: false } : {}),
    ...(o.nfacct !== undefined ? { nfacct: o.nfacct } : {}),
    ...(o.tcpBeLiberal !== undefined ? { conntrackTcpBeLiberal: o.tcpBeLiberal } : {}),
  };
  const families: IPFamily[] =
    o.family === 'both'
      ? ['IPv4', 'IPv6']
      : [
          o.family === 'ipv6'
            ? 'IPv6'
            : o.family === 'ipv4'
              ? 'IPv4'
              : primaryFamily(analysis.view),
        ];
  const out = families.map((family) => {
    if (mode === 'nftables') {
      const n = analysis.node(name!, undefined, family);
      const exp = n.expected();
      return expectedNftText(
        {
          ...exp,
          notes: [...versionNote(state), ...exp.notes, ...releaseAssumed(exp, n.knobs())],
        },
        watchedServiceCIDRs(exp.release, serviceCIDRs(analysis.view)),
      );
    }
    if (mode === 'ipvs') {
      const n = analysis.node(name!, undefined, family);
      const options = n.ipvsOptions();
      const exp = n.expected();
      const e = expectedIpvs(exp, options);
      e.notes.unshift(...versionNote(state));
      e.notes.push(...releaseAssumed(exp, n.knobs()));
      // kube-proxy runs an IPv6 proxier wherever the node has IPv6: said where it is not printed
      if (
        families.length === 1 &&
        family === 'IPv4' &&
        options.nodeAddresses?.some((a) => familyOf(a) === 'IPv6')
      )
        e.notes.push(
          `the node has IPv6, so kube-proxy runs its IPv6 proxier here too: its KUBE-6-* ipsets and ip6tables rules with --family ipv6`,
        );
      return expectedIpvsText(e);
    }
    const exp = node.expected(undefined, { ...flags, family });
    // the knobs' notes say what was assumed; a knob given on the command line is not
    const knobs = node.knobs();
    const notes = [
      ...versionNote(state),
      ...exp.notes,
      ...releaseAssumed(exp, knobs),
      ...(o.nfacct === undefined ? knobs.nfacctNotes : []),
    ];
    const text = expectedSave({ ...exp, notes }, { tables: o.table ? [o.table] : undefined });
    // two rule sets in one output: each says which restore loads it
    return families.length > 1
      ? `# ${family}: ${family === 'IPv4' ? 'iptables-restore' : 'ip6tables-restore'} loads this part\n${text}`
      : text;
  });
  print(out.join('\n'));
  return EXIT.ok;
}

/** What the knobs assumed of the node's kube-proxy release (its version unknown: the newest
 * modelled, said), unless a table read showed the release: the rules' own notes say that one. */
function releaseAssumed(exp: ExpectedRules, knobs: NodeKnobs): string[] {
  return exp.writtenBy ? [] : knobs.notes;
}

/** The version read for the node, and where, said first: the release written follows from it. */
function versionNote(state: NodeState): string[] {
  const read = versionRead(state);
  return read ? [versionReadText(state.node, read)] : [];
}

/** The family of the cluster's first Service cluster IP (the kubernetes Service's, else any): an
 * IPv6-only cluster gets its ip6tables rules without --family. */
function primaryFamily(view: ClusterView): IPFamily {
  const first =
    view.services.find((s) => s.namespace === 'default' && s.name === 'kubernetes') ??
    view.services.find((s) => s.clusterIPs.length > 0);
  return first?.clusterIPs[0]?.includes(':') ? 'IPv6' : 'IPv4';
}

/** `kdebug expect`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    parent
      .command('expect')
      .description(
        "the rules kube-proxy would write on a node: iptables-save text (iptables mode), or its table's nft -f script (nftables mode)",
      )
      .option(
        '--snapshot <dir>',
        'a snapshot directory: its objects.json (default: the live cluster)',
      )
      .option('--node <node>', 'the node to compute the rules for')
      .addOption(new Option('--table <table>', 'only this table').choices(['nat', 'filter']))
      .addOption(
        new Option(
          '--family <family>',
          "which proxier's rules: ipv4 (iptables-save), ipv6 (ip6tables-save) or both (default: the cluster's primary family)",
        ).choices(['ipv4', 'ipv6', 'both']),
      )
      .option(
        '--no-random-fully',
        'the iptables binary lacks MASQUERADE --random-fully (iptables < 1.6.2)',
      )
      .option('--nfacct', 'the node has nfacct counters (kube-proxy 1.31+ adds -m nfacct rules)')
      .option('--no-nfacct', 'the node has no nfacct counters (default: read from its recordings)')
      .option('--tcp-be-liberal', 'sysctl nf_conntrack_tcp_be_liberal=1 (no INVALID drop rule)'),
    ['kdebug expect --snapshot DIR --node node-a > expected.txt'],
  ).action((o: ExpectOptions) => run(expectCommand(o, g())));
};
