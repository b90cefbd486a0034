// `kdebug drift`: what each node's rules do differently from what kube-proxy would write.
import { Analysis } from '../core/nodes/analysis.js';
import {
  DriftInputError,
  driftAnswer,
  driftExit,
  type NodeDrift,
  type NotCompared,
} from '../core/dataplane/drift.js';
import { isDriftReadFailure, said } from '../core/nodes/drift-unavailable.js';
import { nodeErrorsOf, rulesReadError } from '../core/nodes/errors.js';
import { familyNotRecorded, hasRules } from '../core/facts/facts.js';
import { byReason, namedFew } from '../core/nodes/access.js';
import { familyOf, type IPFamily } from '../core/ipv6.js';
import { pickNodes, type SourceFlags } from '../cluster/facts-source.js';
import { driftDoc, driftText } from '../output/drift.js';
import { invocationOf } from './common/invocation.js';
import { readWithSsh } from './common/ssh-source.js';
import {
  dumpFile,
  EXIT,
  format,
  sourceContext,
  UsageError,
  tell,
  textWidth,
  write,
  writeDoc,
  type GlobalOptions,
} from './common/io.js';
import { nodeAccessOptions, withExamples, type Define } from './common/flags.js';
import { Option } from 'commander';

export interface DriftFlags extends SourceFlags {
  /** ipv4, ipv6 or both; default each family recorded for the node. */
  family?: 'ipv4' | 'ipv6' | 'both';
}

export async function driftCommand(o: DriftFlags, g: GlobalOptions): Promise<number> {
  const shown = format(g, 'drift'); // a refused -o before anything is read
  if (o.node !== undefined && o.allNodes)
    throw new UsageError('give --node or --all-nodes, not both');
  const { facts, view, code, label: dir, ssh } = await readWithSsh(o, sourceContext(g));
  const analysis = new Analysis(facts, { view, code, fileOf: dumpFile(o) });
  // a Cilium agent that does not start lists nothing: why, rather than that nothing was recorded
  const chosen = ssh?.node ?? o.node;
  const notStarted = chosen !== undefined ? analysis.node(chosen).agentNotStarted() : undefined;
  if (notStarted) throw new DriftInputError(`node ${chosen}: ${notStarted}`);
  // without --node such nodes are none of those recorded: each said, not left out unsaid
  if (chosen === undefined) for (const line of notStartedLines(analysis)) tell(line);
  const nodes = pickNodes(facts, dir, { ...o, node: chosen }, 'recorded rules', true);
  const from = o.snapshot !== undefined ? `snapshot ${dir}` : dir;
  const label = ssh ? `${from}, ${ssh.node}'s rules read now (${ssh.via})` : from;
  const asked: IPFamily[] =
    o.family === 'ipv4' ? ['IPv4'] : o.family === 'ipv6' ? ['IPv6'] : ['IPv4', 'IPv6'];
  // with --all-nodes a node that cannot be compared is said beside the others, not in their way
  const many = o.allNodes === true && chosen === undefined;
  const compared: NodeDrift[] = [];
  // without --node every node is answered for: the one recorded node compared, the known nodes
  // with no rules recorded said not compared (exit 2), never left out unsaid
  const notCompared: NotCompared[] = chosen === undefined ? unrecorded(analysis, nodes) : [];
  // the families the Services have cluster IPs of: a node that recorded one and not the other
  // leaves the other not compared, said, never a clean node
  const used = new Set(analysis.view.services.flatMap((s) => s.clusterIPs.map(familyOf)));
  for (const n of nodes)
    for (const f of asked) {
      // without --family, a family is compared where its dump was recorded
      if (o.family === undefined && !hasRules(facts, n, f)) {
        // (a Cilium agent's table holds both families)
        if (used.has(f) && analysis.node(n).mode() !== 'cilium')
          notCompared.push({
            node: n,
            family: f,
            why: `${familyNotRecorded(facts, n, f, false)}: ${f} not compared`,
          });
        continue;
      }
      try {
        if (!hasRules(facts, n, f))
          throw new UsageError(`${dir}: ${familyNotRecorded(facts, n, f)}`);
        const d = analysis.node(n, undefined, f).drift();
        // a family no Service has, and nothing of it on the node but base rules: no block beside
        // the node's other family (a node's only rule set is still answered for)
        const other = asked.some((h) => h !== f && hasRules(facts, n, h));
        if (o.family === undefined && other && !used.has(f) && nothingOf(d)) continue;
        compared.push(d);
      } catch (e) {
        if (!many || !(isDriftReadFailure(e) || e instanceof UsageError)) throw e;
        const reason = analysis.node(n, undefined, f).driftUnavailable();
        notCompared.push({ node: n, family: f, why: reason ? said(reason) : e.message });
      }
    }
  // nothing compared at all: kdebug could not do its job, said as one error
  if (compared.length === 0 && notCompared.length > 0)
    throw new DriftInputError(notComparedLine(notCompared));
  const answer = driftAnswer(label, compared, notCompared);
  const how = invocationOf(g, o);
  if (shown === 'json') writeDoc(driftDoc(answer, how));
  else write(driftText(answer, how, textWidth().width));
  return EXIT[driftExit(answer)];
}

/** No Service port compared, and nothing found, noted or left unread on the node. */
const nothingOf = (d: NodeDrift): boolean =>
  d.servicePorts === 0 &&
  d.findings.length === 0 &&
  !d.notes?.length &&
  !d.notRead?.length &&
  !d.readInPart?.length;

/** The known nodes (Node objects) with no rules recorded, each with why: its read's error where
 * one was recorded; those whose Cilium agent has not started are said apart (notStartedLines). */
function unrecorded(analysis: Analysis, recorded: string[]): NotCompared[] {
  const errors = nodeErrorsOf(analysis.facts);
  return analysis.view.nodes
    .map((n) => n.name)
    .filter((n) => !recorded.includes(n) && !analysis.node(n).agentNotStarted())
    .map((node) => ({
      node,
      why: rulesReadError(errors, node) ?? 'no rules recorded for it',
    }));
}

/** The nodes not compared, grouped by why, as one line. */
const notComparedLine = (left: NotCompared[]): string =>
  byReason(left.map((n) => ({ node: n.node, reason: n.why })))
    .map(
      (g) => `${plural(g.nodes.length, 'node')} not compared: ${namedFew(g.nodes)} (${g.reason})`,
    )
    .join('; ');

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The nodes not compared because their Cilium agent has not started (nothing of it listed), as
 * nodes not reached are said: grouped by why. */
function notStartedLines(analysis: Analysis): string[] {
  const left = analysis.view.nodes.flatMap(({ name }) => {
    const reason = analysis.node(name).agentNotStarted();
    return reason && !hasRules(analysis.facts, name) ? [{ node: name, reason }] : [];
  });
  return byReason(left).map(
    (g) =>
      `${g.nodes.length} node${g.nodes.length === 1 ? '' : 's'} not compared: ${namedFew(g.nodes)} (${g.reason})`,
  );
}

/** `kdebug drift`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    nodeAccessOptions(
      parent
        .command('drift')
        .description(
          "what each node's rules do differently from what kube-proxy would write (exit 1 on drift)",
        )
        .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
        .option('--node <node>', 'the node to check')
        .addOption(
          new Option(
            '--family <family>',
            'which rule set: ipv4 (iptables), ipv6 (ip6tables) or both (default: each one recorded)',
          ).choices(['ipv4', 'ipv6', 'both']),
        )
        .option('--all-nodes', 'every node')
        .option(
          '--ssh <[user@]host[:port]>',
          "with --snapshot: that node's rules read over SSH now",
        ),
    ),
    ['kdebug drift --all-nodes', 'kdebug drift --snapshot DIR --node node-a -o json'],
  ).action((o: DriftFlags) => run(driftCommand(o, g())));
};
