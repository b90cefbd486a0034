// `kdebug drift`: what each node's rules do differently from what kube-proxy would write.
import { Analysis } from '../core/analysis.js';
import { driftAnswer } from '../core/drift.js';
import {
  pickNodes,
  readFacts,
  readNodeOverSsh,
  type SourceFlags,
} from '../cluster/facts-source.js';
import { driftJson, driftText } from '../output/drift.js';
import {
  dumpFile,
  EXIT,
  format,
  sourceContext,
  UsageError,
  write,
  type GlobalOptions,
} from './io.js';

export async function driftCommand(o: SourceFlags, g: GlobalOptions): Promise<number> {
  const shown = format(g, 'drift'); // a refused -o before anything is read
  if (o.node !== undefined && o.allNodes)
    throw new UsageError('give --node or --all-nodes, not both');
  if (o.ssh !== undefined && o.snapshot === undefined)
    throw new UsageError('--ssh takes the objects from a snapshot: give --snapshot DIR too');
  if (o.ssh !== undefined && o.allNodes)
    throw new UsageError('--ssh reads one node: give --node (or none), not --all-nodes');
  const c = sourceContext(g);
  const { facts, label: dir } = await readFacts(o, c, { rules: o.ssh === undefined });
  const ssh =
    o.ssh !== undefined ? await readNodeOverSsh(facts, dir, { ...o, ssh: o.ssh }, c) : undefined;
  const nodes = pickNodes(facts, dir, { ...o, node: ssh?.node ?? o.node }, 'recorded rules', true);
  const analysis = new Analysis(facts, { fileOf: dumpFile(o) });
  const from = o.snapshot !== undefined ? `snapshot ${dir}` : dir;
  const label = ssh ? `${from}, ${ssh.node}'s rules read now (${ssh.via})` : from;
  const answer = driftAnswer(
    label,
    nodes.map((n) => analysis.node(n).drift()),
  );
  write(shown === 'json' ? driftJson(answer) : driftText(answer));
  return answer.drifted ? EXIT.problem : EXIT.ok;
}
