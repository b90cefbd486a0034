// Step 7 on a Cilium node, beside its table: an agent whose release refuses cilium-config as read
// (not started, so nothing of it to compare; or, its table read, to stop at its next start), the
// Service's loadBalancerSourceRanges the agent ignores (as expect and drift say it), and a table
// read in part that leaves out some of the Service's frontends or backends.
import { notStarted, refusal } from '../../dataplane/cilium/agent/refused.js';
import { ignoredRangesOf, rangesRead } from '../../dataplane/cilium/expected/source-ranges.js';
import { sourceRangeCheckOf } from '../../dataplane/cilium/agent/comparable.js';
import { settingsStated, type SettingStated } from '../../dataplane/cilium/agent/provenance.js';
import type { Service } from '../../kube/objects.js';
import { familyOf, type IPFamily } from '../../ipv6.js';
import type { Evidence, Finding } from '../../model.js';
import type { DriftFinding } from '../../dataplane/drift.js';
import { findingOf } from '../check.js';
import type { CheckContext } from '../context.js';
import type { NodeAnalysis } from '../../nodes/node-analysis.js';

const finding = findingOf('rules');

/** The node's agent refusing its configuration, where it replaces kube-proxy and does;
 * `listed`: its table was read without failure. */
export function ciliumRefused(
  ctx: CheckContext,
  n: NodeAnalysis,
  listed: boolean,
): Finding | undefined {
  const node = n.name;
  const agent = n.replacingAgent();
  const said = agent && refusal(agent, listed);
  if (!agent || !said) return undefined;
  return finding(
    'cilium-config-refused',
    'warn',
    listed
      ? "cilium-config as read would stop the agent's next start"
      : notStarted(agent)
        ? "Cilium's agent does not start with its configuration"
        : 'cilium-config as read would stop the agent at a start',
    {
      explanation: `${said.why}.`,
      evidence: said.evidence,
      // the log of its last start says why it stopped
      next: said.next,
      node,
    },
  );
}

/** The node's agent has no Pod in the API, and its listings recorded there were compared: said
 * beside what they show (a note), as drift says it. */
export function ciliumPodAbsent(ctx: CheckContext, n: NodeAnalysis): Finding[] {
  const node = n.name;
  const read = n.stateRead();
  if (!n.recordedAgent() || !read || read.failure) return [];
  return [
    finding(
      'cilium-agent-pod-absent',
      'pass',
      `no Cilium agent Pod on ${node} in the API: its recorded listings compared`,
      {
        explanation: `The API holds no Cilium agent Pod on ${node}, yet its agent's status and listings were recorded there (${read.source}): they are compared as the agent held them when recorded. Whether an agent still runs there now, and keeps them current, is not known from the API (the kube-proxy step says so).`,
        evidence: [ctx.analysis.state(node).mode.evidence],
        node,
        info: true,
      },
    ),
  ];
}

/** The Service's frontends a Local Redirect Policy takes on the node (drift's
 * cilium-local-redirect notes, of `names`' ports): a warn, never the Service's endpoints
 * verified there, since this node sends their traffic to the policy's Pods instead. */
export function ciliumRedirected(
  node: string,
  notes: readonly DriftFinding[],
  names: ReadonlySet<string>,
): Finding[] {
  return notes
    .filter((d) => d.id === 'cilium-local-redirect' && d.service && names.has(d.service))
    .map((d) =>
      finding('cilium-local-redirect', 'warn', d.title, {
        explanation: d.explanation,
        evidence: d.evidence,
        node,
        service: d.service,
      }),
    );
}

/** The Service's loadBalancerSourceRanges the node's agent ignores, where it replaces kube-proxy,
 * each Service's said once: a note, a warn where every client is let in despite the spec. */
export function ciliumIgnoredRanges(ctx: CheckContext, n: NodeAnalysis, svc: Service): Finding[] {
  const node = n.name;
  const agent = n.replacingAgent();
  if (!agent) return [];
  const name = `${svc.namespace}/${svc.name}`;
  const frontends = n.ciliumExpected(ctx.scope) ?? [];
  const said = ignoredRangesOf(
    frontends.filter((f) => f.service === name),
    sourceRangeCheckOf(agent.settings),
  );
  return said.map((s) =>
    finding('cilium-source-range-ignored', s.open ? 'warn' : 'pass', s.title, {
      explanation: `${s.text}.`,
      evidence: [rangesRead(svc)],
      node,
      // a note, worth reading where the table matches, unless the spec's restriction is lost
      ...(s.open ? {} : { info: true }),
    }),
  );
}

/** The node's Cilium table read in part (cut short, rows elided, backends not shown) where it
 * leaves out some of the Service's frontends or backends (`blind`: the lines that say so, not
 * observed): a skip, never a match, as a dump cut short is not compared. */
export function ciliumReadInPart(
  node: string,
  svc: Service,
  source: string,
  blind: Evidence[],
): Finding {
  const name = `${svc.namespace}/${svc.name}`;
  return finding(
    'rules-cilium-not-observed',
    'skip',
    `Cilium's table read in part: ${name} not all in it`,
    {
      explanation: `The listing of Cilium's agent on ${node} (${source}) is not whole where it would hold ${name}: its frontends or backends that are not in what was read could be missing from the listing only, so nothing of them is said to be there or missing, and the Service is not said to match there. Save the whole listing again to compare it.`,
      evidence: blind,
      node,
    },
  );
}

/** A node where Cilium's agent replaces kube-proxy, in `svc -o json`: its agent and the settings
 * it was compared with, each with where it was read, as drift's and expect's JSON give them. */
export interface CiliumNodeStated {
  node: string;
  cilium: { agent: string; version?: string; settings: SettingStated[] };
}

/** The nodes in Cilium's mode whose agent was found, each with its settings and their sources. */
export function ciliumNodesStated(ctx: CheckContext): CiliumNodeStated[] {
  return ctx.nodeNames().flatMap((node) => {
    const agent = ctx.analysis.node(node).replacingAgent();
    if (!agent) return [];
    return [
      {
        node,
        cilium: {
          agent: `${agent.pod.namespace}/${agent.pod.name}`,
          ...(agent.version ? { version: agent.version } : {}),
          settings: settingsStated(agent),
        },
      },
    ];
  });
}

/** The families of the Service's ClusterIPs the node's agent is expected to serve: its one
 * table holds both, and a match of it says nothing of a family the agent does not run. */
export function ciliumFamiliesServed(ctx: CheckContext, n: NodeAnalysis, svc: Service): IPFamily[] {
  const name = `${svc.namespace}/${svc.name}`;
  const ips = new Set(svc.clusterIPs);
  const served = (n.ciliumExpected(ctx.scope) ?? [])
    .filter((f) => f.service === name && ips.has(f.ip))
    .map((f) => familyOf(f.ip));
  return (['IPv4', 'IPv6'] as const).filter((family) => served.includes(family));
}
