// A node the API says is down: its Ready condition False or Unknown. What the steps say of its
// Pods starts from it. The node controller's unreachable / not-ready taint is only said beside.
import { read } from '../findings/evidence.js';
import type { Node } from '../kube/objects.js';
import type { Evidence } from '../model.js';
import { kubectl, valid } from '../findings/next-command.js';
import type { CheckContext } from './context.js';

export interface NodeDown {
  node: string;
  /** "Unknown": its kubelet stopped posting status, so what the API says of its Pods is stale. */
  status: string;
  /** "NotReady (Ready=Unknown: NodeStatusUnknown)", for a title. */
  short: string;
  evidence: Evidence[];
}

/** The node named, if the API says it is not Ready; undefined where it is, or was not read. */
export function nodeDown(ctx: CheckContext, name: string | undefined): NodeDown | undefined {
  const n = name === undefined ? undefined : ctx.view.nodes.find((x) => x.name === name);
  if (!n) return undefined;
  const c = n.readyCondition;
  // the condition decides: a taint alone may be one the node controller has not removed yet
  if (c?.status !== 'False' && c?.status !== 'Unknown') return undefined;
  return {
    node: n.name,
    status: c.status,
    short: `NotReady (Ready=${c.status}${c.reason ? `: ${c.reason}` : ''})`,
    evidence: [read(conditionLine(n), `Node ${n.name}`)],
  };
}

/** A node not down by nodeDown() that still carries a down taint: said beside, never the cause. */
export function downTaintOnly(ctx: CheckContext, name: string | undefined): Evidence | undefined {
  const n = name === undefined ? undefined : ctx.view.nodes.find((x) => x.name === name);
  if (!n || n.downTaints.length === 0 || nodeDown(ctx, name)) return undefined;
  return read(`${conditionLine(n)} (the Ready condition decides, not the taint)`, `Node ${n.name}`);
}

/** `kubectl describe node`: its conditions, taints and events say why it is down. */
export const describeNode = (node: string) =>
  kubectl(undefined, 'describe', 'node', valid.name(node));

function conditionLine(n: Node): string {
  const c = n.readyCondition;
  const ready = c
    ? `Ready=${c.status}${c.reason ? ` (${c.reason})` : ''}${c.lastTransitionTime ? ` since ${c.lastTransitionTime}` : ''}`
    : 'no Ready condition';
  const taints = n.downTaints.length > 0 ? `; taint ${n.downTaints.join(', ')}` : '';
  return `Node ${n.name}: ${ready}${taints}`;
}
