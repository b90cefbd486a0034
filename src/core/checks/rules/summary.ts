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
    .trees(node)
    ?.services.find(
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

/** What one node's rules do for one Service port: send to so many endpoints, reject (none),
 * hold no endpoint, or hold no rules for it. */
export interface PortHeld {
  port: number;
  protocol: string;
  held: number | 'reject' | 'none' | 'no rules';
}

/** What one node's rules do for the Service, port by port, with the rules. */
export interface NodeSummary {
  node: string;
  ports: PortHeld[];
  evidence: Evidence[];
}

/** Whether nodes' rules do the same for every port: one line can say what all of them do. */
export const sameHeld = (a: PortHeld[], b: PortHeld[]): boolean =>
  a.length === b.length &&
  a.every(
    (p, i) => p.port === b[i]!.port && p.protocol === b[i]!.protocol && p.held === b[i]!.held,
  );

/** "80/TCP -> 3 endpoints, 53/UDP -> REJECT (no endpoints)". */
export const heldText = (ports: PortHeld[]): string =>
  ports
    .map(({ port, protocol, held }) => {
      const label = `${port}/${protocol}`;
      if (held === 'no rules') return `${label}: no rules`;
      if (held === 'reject') return `${label} -> REJECT (no endpoints)`;
      return held === 'none'
        ? `${label} -> no endpoints`
        : `${label} -> ${count(held, 'endpoint')}`;
    })
    .join(', ');

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
  const ports: PortHeld[] = [];
  for (const port of svc.ports) {
    const at = { port: port.port, protocol: port.protocol };
    const tree = from.tree(port);
    if (!tree) {
      ports.push({ ...at, held: 'no rules' });
      continue;
    }
    lines.push(...treeEvidence(node, tree, from.line));
    const reject = tree.verdicts.some((v) => v.kind === 'reject');
    const eps = clusterTrafficEndpoints(tree);
    ports.push({ ...at, held: eps.length > 0 ? eps.length : reject ? 'reject' : 'none' });
  }
  return { node, ports, evidence: lines };
}
