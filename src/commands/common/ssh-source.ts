// The facts drift and trace work on: a snapshot's or the live cluster's, and with --ssh the
// snapshot's objects beside one node's rules read now over SSH in place of its recorded ones.
import {
  readFacts,
  readNodeOverSsh,
  type SourceContext,
  type SourceFlags,
  type SourcedFacts,
} from '../../cluster/facts-source.js';
import { UsageError } from './io.js';

/** The facts of --snapshot or the live cluster; with --ssh (a snapshot's, one node) `ssh` names
 * the node whose rules were read now and how. */
export async function readWithSsh(
  o: SourceFlags,
  c: SourceContext,
): Promise<SourcedFacts & { ssh?: { node: string; via: string } }> {
  if (o.ssh !== undefined && o.snapshot === undefined)
    throw new UsageError('--ssh takes the objects from a snapshot: give --snapshot DIR too');
  if (o.ssh !== undefined && o.allNodes)
    throw new UsageError('--ssh reads one node: give --node (or none), not --all-nodes');
  const read = await readFacts(o, c, { rules: o.ssh === undefined });
  if (o.ssh === undefined) return read;
  return { ...read, ssh: await readNodeOverSsh(read.facts, read.label, { ...o, ssh: o.ssh }, c) };
}
