// Step 7 on a Cilium node, beside its table: an agent whose release refuses cilium-config as read
// (not started, so nothing of it to compare; or, its table read, to stop at its next start), and
// the Service's loadBalancerSourceRanges the agent ignores (as expect and drift say it).
import { read } from '../../evidence.js';
import {
  notStarted,
  previousLog,
  refusedEvidence,
  refusedText,
} from '../../dataplane/cilium/refused.js';
import { ignoredRangesOf } from '../../dataplane/cilium/source-ranges.js';
import type { Service } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { findingOf, serviceRef } from '../check.js';
import type { CheckContext } from '../context.js';
import type { NodeAnalysis } from '../../analysis.js';

const finding = findingOf('rules');

/** The node's agent refusing its configuration, where it replaces kube-proxy and does;
 * `listed`: its table was read without failure. */
export function ciliumRefused(
  ctx: CheckContext,
  n: NodeAnalysis,
  listed: boolean,
): Finding | undefined {
  if (n.mode() !== 'cilium') return undefined;
  const node = n.name;
  const agent = ctx.analysis.state(node).cilium;
  const why = agent && refusedText(agent, listed);
  if (!agent || !why) return undefined;
  return finding(
    'cilium-config-refused',
    'warn',
    listed
      ? "cilium-config as read would stop the agent's next start"
      : notStarted(agent)
        ? "Cilium's agent does not start with its configuration"
        : 'cilium-config as read would stop the agent at a start',
    {
      explanation: `${why}.`,
      evidence: refusedEvidence(agent),
      // the log of its last start says why it stopped
      next: previousLog(agent),
      node,
    },
  );
}

/** The Service's loadBalancerSourceRanges the node's agent ignores, where it replaces kube-proxy,
 * each Service's said once: a note, a warn where every client is let in despite the spec. */
export function ciliumIgnoredRanges(ctx: CheckContext, n: NodeAnalysis, svc: Service): Finding[] {
  const node = n.name;
  const agent = ctx.analysis.state(node).cilium;
  if (n.mode() !== 'cilium' || !agent) return [];
  const name = `${svc.namespace}/${svc.name}`;
  const frontends = n.ciliumExpected(ctx.scope) ?? [];
  const written = (svc.raw['spec'] as { loadBalancerSourceRanges?: unknown })
    .loadBalancerSourceRanges;
  const said = ignoredRangesOf(
    frontends.filter((f) => f.service === name),
    agent.settings.sourceRangeCheck,
  );
  return said.map((s) =>
    finding('cilium-source-range-ignored', s.open ? 'warn' : 'pass', s.title, {
      explanation: `${s.text}.`,
      // the ranges as the API holds them: their spaces are what the agent reads
      evidence: [
        read(`spec.loadBalancerSourceRanges: ${JSON.stringify(written)}`, serviceRef(svc)),
      ],
      node,
      // a note, worth reading where the table matches, unless the spec's restriction is lost
      ...(s.open ? {} : { info: true }),
    }),
  );
}
