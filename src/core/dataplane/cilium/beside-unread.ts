// A kube-proxy node whose Cilium agent may serve Services ahead of kube-proxy's rules, but what it
// serves, or its table, was not read: kube-proxy's rules are compared and walked alone, and the
// node says what of the agent was not compared and why, never a verdict on that half.
import type { Dataplane } from '../dataplane.js';
import type { DriftFinding, NodeDrift } from '../drift.js';
import { driftFinding } from '../drift.js';
import { read, seen, unseen } from '../../findings/evidence.js';
import type { Evidence } from '../../model.js';
import { agentName, CILIUM_STEMS, knows, partialText, type CiliumAgent } from './agent/agent.js';
import { sourceText, wasRead } from './agent/provenance.js';

/** What of the agent beside kube-proxy was not read: its replacement setting, the kinds its
 * partial replacement serves, or its table. */
export interface AgentUnread {
  /** Why its half was not compared, in words ("its Service table ... was not read"). */
  why: string;
  /** The same, short, for a title: "its Service table not read". */
  what: string;
  /** What kube-proxy's rules are not known to decide: the kinds the agent takes ahead of them. */
  kinds: string;
  evidence: Evidence[];
}

/** What was not read of `agent` on a kube-proxy node where its table is `table` (undefined: no
 * listing of it read; `failure`: why one recorded did not read); undefined where nothing: no
 * replacement read as such (off, with its source), or one whose kinds and table were read. */
export function agentUnread(
  agent: CiliumAgent,
  table: { read: boolean; failure?: string },
): AgentUnread | undefined {
  const who = agentName(agent);
  const setting = agent.sources.kubeProxyReplacement;
  const r = agent.replacement;
  const runs = read(
    `${who} on ${agent.node}`,
    agent.pod && `Pod ${agent.pod.namespace}/${agent.pod.name}`,
  );
  if (!r) {
    if (wasRead(setting) && knows(agent.settings, 'kubeProxyReplacement')) return undefined;
    const how = knows(agent.settings, 'kubeProxyReplacement')
      ? `its kube-proxy-replacement setting was ${sourceText(agent, setting)}`
      : `its kube-proxy-replacement setting is not known (cilium-config as read is refused by its release)`;
    return {
      why: `${how}, so whether it serves any Service kind ahead of kube-proxy's rules is not known`,
      what: 'its kube-proxy-replacement setting not known',
      kinds: 'any Service kind',
      evidence: [runs, unseen(`${who}'s kube-proxy-replacement: ${how}`, agent.node)],
    };
  }
  const replacement =
    r.from === 'status'
      ? seen(`${partialText(r)} (${r.source})`, {
          node: agent.node,
          source: `nodes/${agent.node}/${CILIUM_STEMS.status}.txt`,
        })
      : read(`${partialText(r)} (${r.source})`, 'ConfigMap cilium-config');
  if (!r.handles)
    return {
      why: `it runs a ${partialText(r)}, so which Service kinds it serves ahead of kube-proxy's rules is not known`,
      what: 'the Service kinds it serves not known',
      kinds: 'the kinds it handles',
      evidence: [replacement, unseen(`the kinds ${who} handles: not known`, agent.node)],
    };
  if (table.read) return undefined;
  const listing = `its Service table (cilium-dbg service list, db/show frontends or bpf lb list)`;
  return {
    why: `it serves ${r.handles.join(', ')} ahead of kube-proxy's rules (${partialText(r)}), and ${listing} was not read${table.failure ? `: ${table.failure}` : ''}`,
    what: 'its Service table not read',
    kinds: r.handles.join(', '),
    evidence: [replacement, unseen(`${listing}: not read`, agent.node)],
  };
}

/** The note a node's drift carries: the agent's half not compared, and why. */
function unreadNote(d: NodeDrift, agent: CiliumAgent, u: AgentUnread): DriftFinding {
  const f = driftFinding(
    'table-not-captured',
    {
      title: `Cilium's agent beside kube-proxy not compared`,
      message: `${agentName(agent)} runs on ${d.node} beside kube-proxy, and ${u.why}: only kube-proxy's rules were compared, and nothing is said of what the agent holds for ${u.kinds}, which it may take before kube-proxy's rules see them.`,
      evidence: u.evidence,
    },
    { node: d.node, source: d.source },
    'info',
  );
  return { ...f, drift: { ...f.drift, component: 'cilium' } };
}

/** kube-proxy's `own` dataplane, saying in its drift and walks what of `agent` was not read. */
export function besideUnread(own: Dataplane, agent: CiliumAgent, u: AgentUnread): Dataplane {
  return {
    ...own,
    drift: (node, expected, trees, scope) => {
      const d = own.drift(node, expected, trees, scope);
      return {
        ...d,
        notRead: [...(d.notRead ?? []), unreadNote(d, agent, u)],
        // the node's drift is not known whole: JSON names the part, and drift exits 2
        readInPart: [...(d.readInPart ?? []), `${agentName(agent)} beside kube-proxy (${u.what})`],
      };
    },
    notCompared: (d) =>
      [own.notCompared(d), `${agentName(agent)} beside kube-proxy was not compared (${u.why})`]
        .filter((x) => x !== undefined)
        .join('; '),
    // the agent may take the Service's packets before kube-proxy's rules: no match is said
    forwardingNotRead: (d) =>
      own.forwardingNotRead?.(d) ?? `${agentName(agent)} beside kube-proxy (${u.what})`,
    trace: (packet, net) => {
      const walked = own.trace(packet, net);
      return {
        ...walked,
        notes: [
          `${agentName(agent)} runs here beside kube-proxy, and ${u.why}: this walk through kube-proxy's rules is the packet's path only where the agent does not take it first`,
          ...walked.notes,
        ],
      };
    },
  };
}
