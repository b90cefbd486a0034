// `kdebug trace`: one packet walked through a node's rules, every outcome with its chance.
import { Analysis } from '../core/nodes/analysis.js';
import { familyNotRecorded, hasRules } from '../core/facts/facts.js';
import { unavailableText } from '../core/nodes/drift-unavailable.js';
import { canonicalAddress, familyOf } from '../core/ipv6.js';
import type { TraceProtocol } from '../core/dataplane/trace/trace.js';
import { traceAnswer, traceFails } from '../core/dataplane/trace/answer.js';
import { pickNodes, type SourceFlags } from '../cluster/facts-source.js';
import { traceDoc, traceText } from '../output/trace.js';
import { invocationOf } from './common/invocation.js';
import { readWithSsh } from './common/ssh-source.js';
import {
  dumpFile,
  EXIT,
  format,
  sourceContext,
  UsageError,
  textWidth,
  write,
  writeDoc,
  type GlobalOptions,
} from './common/io.js';
import { nodeAccessOptions, withExamples, type Define } from './common/flags.js';
import { isPort } from '../cluster/nodes/valid-command.js';
import { Option } from 'commander';

export interface TraceOptions extends SourceFlags {
  src?: string;
  dst?: string;
  proto: TraceProtocol;
  fromHost?: boolean;
}

export async function traceCommand(o: TraceOptions, g: GlobalOptions): Promise<number> {
  const shown = format(g, 'trace'); // a refused -o before anything is read
  // "10.96.0.10:53", "[fd00::a]:53", or an address alone (icmp)
  const m =
    /^\[([^\]]+)\](?::(\d+))?$/.exec(o.dst ?? '') ??
    /^([^:]+)(?::(\d+))?$/.exec(o.dst ?? '') ??
    /^([0-9a-fA-F:.]+)()$/.exec(o.dst ?? '');
  const family = m ? familyOf(m[1]!) : undefined;
  if (!m || !family)
    throw new UsageError('give the destination as --dst IP:PORT ([IPv6]:PORT for IPv6)');
  const port = m[2] || undefined;
  if (o.proto !== 'icmp' && port === undefined)
    throw new UsageError(`--dst needs a port for ${o.proto}: IP:PORT`);
  if (port !== undefined && !isPort(Number(port)))
    throw new UsageError(`--dst ${o.dst}: port ${port} is not a port (1-65535)`);
  if (o.proto === 'icmp' && port !== undefined)
    throw new UsageError(
      `--dst ${o.dst}: icmp has no ports (ping reaches the address alone): give --dst ${m[1]}`,
    );
  const { facts, view, code, label, ssh } = await readWithSsh(o, sourceContext(g));
  const analysis = new Analysis(facts, { view, code, fileOf: dumpFile(o) });
  // a Cilium agent that does not start translates nothing: said, and no table walked
  const chosen = ssh?.node ?? o.node;
  const notStarted = chosen !== undefined ? analysis.node(chosen).agentNotStarted() : undefined;
  if (notStarted) throw new UsageError(`node ${chosen}: ${notStarted}`);
  const [name] = pickNodes(facts, label, { node: chosen }, 'recorded rules');
  // a node that recorded the packet's other family only has no rules to walk it through
  // (a Cilium agent's table holds both families)
  if (!hasRules(facts, name!, family) && analysis.node(name!).mode() !== 'cilium')
    throw new UsageError(`${label}: ${familyNotRecorded(facts, name!, family)}`);
  // an IPv6 packet walks the node's ip6tables rules
  const node = analysis.node(name!, undefined, family);
  // an unreadable dump or table is said before the source address is asked for
  if (node.mode() !== 'iptables') {
    // (an unreadable listing is in driftUnavailable's reason); an IPVS or nftables listing cut
    // short is walked as far as it was read, as an iptables dump is
    const unavailable = node.driftUnavailable();
    if (unavailable && unavailable.kind !== 'listing-cut')
      throw new UsageError(unavailableText(name!, unavailable));
  } else node.ruleset();
  const nodeIP = analysis.view.nodes
    .find((n) => n.name === name)
    ?.ips.find((ip) => familyOf(ip) === family);
  const src = o.src ?? (o.fromHost ? nodeIP : undefined);
  if (src === undefined || familyOf(src) !== family)
    throw new UsageError(
      o.src === undefined
        ? `give the source: --src IP (a Pod IP, or a client outside the cluster; with --from-host it defaults to the node's ${family} address)`
        : `--src ${o.src} is not an ${family} address (the destination is ${family})`,
    );
  // a dump cut short is walked as far as it was read, and says where it stopped
  const { result, stop } = node.traced({
    src: canonicalAddress(src),
    dst: canonicalAddress(m[1]!),
    dport: port ? Number(port) : undefined,
    protocol: o.proto,
    fromHost: !!o.fromHost,
  });
  // the node's Service trees say whose node port took the packet, beside the API's Services
  const answer = traceAnswer(result, analysis.view, name!, stop, node.trees());
  const how = invocationOf(g, { snapshot: o.snapshot });
  if (shown === 'json') writeDoc(traceDoc(answer));
  else write(traceText(answer, textWidth().width, how));
  // a walk of rules not wholly read is a partial answer: exit 2 unless what it read fails
  return traceFails(answer) ? EXIT.problem : answer.stop ? EXIT.failed : EXIT.ok;
}

/** `kdebug trace`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    nodeAccessOptions(
      parent
        .command('trace')
        .description(
          "walk one packet through a node's rules: every outcome, its chance, the rules it matched",
        )
        .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
        .option('--node <node>', 'the node whose rules to walk')
        .option('--src <ip>', 'source address (a Pod IP, or a client outside the cluster)')
        .option(
          '--dst <ip:port>',
          'destination, e.g. a ClusterIP and port or a node IP and node port',
        )
        .addOption(
          new Option('--proto <protocol>', 'protocol')
            .choices(['tcp', 'udp', 'sctp', 'icmp'])
            .default('tcp'),
        )
        .option(
          '--from-host',
          'sent by a process on the node (nat OUTPUT) rather than a Pod or the network',
        )
        .option(
          '--ssh <[user@]host[:port]>',
          "with --snapshot: that node's rules read over SSH now",
        ),
    ),
    ['kdebug trace --node node-a --src 10.244.0.5 --dst 10.96.0.10:53 --proto udp'],
  ).action((o: TraceOptions) => run(traceCommand(o, g())));
};
