// Step 7: what one node's rules do for the Service, read back as its trees: "80/TCP -> 3
// endpoints", with the rule lines as evidence seen there (IPv4 from the context, IPv6 from the
// node's ip6tables dump).
import { seen } from '../../findings/evidence.js';
import type { Service, ServicePort } from '../../kube/objects.js';
import type { NodeAnalysis } from '../../nodes/node-analysis.js';
import { clusterTrafficEndpoints, type ServiceTree } from '../../dataplane/trees.js';
import { count } from '../check.js';
import type { CheckContext } from '../context.js';
import { percent, type Evidence } from '../../model.js';

/** The tree of one Service port in a node's rules. */
export function treeOf(
  ctx: CheckContext,
  node: string,
  port: ServicePort,
): ServiceTree | undefined {
  const spn = ctx.servicePortName(port);
  const svc = ctx.service!;
  return ctx
    .rules(node)
    ?.trees?.services.find(
      (t) =>
        t.name === spn ||
        (t.clusterIP === svc.clusterIP &&
          t.port === port.port &&
          t.protocol === port.protocol.toLowerCase()),
    );
}

/** A rule line as evidence ("nodes/n/iptables-save.txt:42: -A ..."), by table and line. */
type LineReader = (table: string, line: number) => Evidence | undefined;

/** A tree as evidence seen on the node: entry rules, then each endpoint with its share and DNAT. */
function treeEvidence(node: string, tree: ServiceTree, line: LineReader): Evidence[] {
  const at = { node };
  const out: Evidence[] = [];
  for (const e of tree.entries)
    out.push(line('nat', e.line) ?? seen(`nat ${e.from} line ${e.line} -> ${e.chain}`, at));
  for (const ep of clusterTrafficEndpoints(tree))
    out.push(
      seen(
        `  ${ep.shareUnknown ? '?' : percent(ep.probability)} -> ${ep.chain}: ${ep.chainMissing ? 'chain not in the dump' : `DNAT ${ep.address ?? ep.inferredIP ?? (ep.hostStart ? `${ep.hostStart}… (cut)` : '?')}`}`,
        at,
      ),
    );
  for (const v of tree.verdicts)
    out.push(line(v.table, v.line) ?? seen(`${v.table} ${v.chain} line ${v.line}: ${v.kind}`, at));
  return out;
}

/** What one node's rules do for the Service: "80/TCP -> 3 endpoints", with the rules. */
export interface NodeSummary {
  node: string;
  ports: string;
  evidence: Evidence[];
}

/** Where a summary reads a node's trees and rule lines: the IPv4 rules the context holds, or
 * another family's. */
interface TreeSource {
  tree(port: ServicePort): ServiceTree | undefined;
  line: LineReader;
}

export const ipv4Source = (ctx: CheckContext, node: string): TreeSource => ({
  tree: (port) => treeOf(ctx, node, port),
  line: (table, n) => ctx.lineEvidence(node, table, n),
});

/** The IPv6 trees of a node, found by Service port name, with ip6tables-save's lines. */
export function ipv6Source(ctx: CheckContext, node: string, na: NodeAnalysis): TreeSource {
  const read = na.rules();
  return {
    tree: (port) => na.trees(ctx.scope)?.services.find((t) => t.name === ctx.servicePortName(port)),
    line: (table, n) => {
      const t = read?.ruleset?.table(table);
      const id = t ? t.ruleAtLine(n) : -1;
      return t && id >= 0
        ? seen(`${read!.source}:${n}: ${t.text(id)}`, { node, source: read!.source, line: n })
        : undefined;
    },
  };
}

export function summary(node: string, svc: Service, from: TreeSource): NodeSummary {
  const lines: Evidence[] = [];
  const parts: string[] = [];
  for (const port of svc.ports) {
    const tree = from.tree(port);
    if (!tree) {
      parts.push(`${port.port}/${port.protocol}: no rules`);
      continue;
    }
    lines.push(...treeEvidence(node, tree, from.line));
    const reject = tree.verdicts.find((v) => v.kind === 'reject');
    const eps = clusterTrafficEndpoints(tree);
    parts.push(
      eps.length > 0
        ? `${port.port}/${port.protocol} -> ${count(eps.length, 'endpoint')}`
        : reject
          ? `${port.port}/${port.protocol} -> REJECT (no endpoints)`
          : `${port.port}/${port.protocol} -> no endpoints`,
    );
  }
  return { node, ports: parts.join(', '), evidence: lines };
}
