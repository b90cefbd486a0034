// What the probes did not observe, said as skips: a probe that could not run, an address not
// probed from a node that probed others, a node that ran no probe.
import { unseen } from '../../findings/evidence.js';
import type { ServicePort } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { count, findingOf, listFew, otherWay } from '../check.js';
import type { CheckContext } from '../context.js';
import { idleProbers, probingNodes, probedEvidence, type Probed } from './probes.js';

const finding = findingOf('reachability');

/** Probes that did not observe anything, said as such: neither reachable nor unreachable. */
export function notObserved(
  ctx: CheckContext,
  what: string,
  blind: Probed[],
  port: ServicePort,
): Finding[] {
  if (blind.length === 0) return [];
  const nodes = [...new Set(blind.map((p) => p.node))];
  return [
    finding('probe-not-observed', 'skip', `${what}: not observed on ${listFew(nodes, 3)}`, {
      explanation: `The probe could not run there (${blind[0]!.result.detail}), so kdebug does not know whether ${what} answers from ${nodes.length === 1 ? 'that node' : 'those nodes'}. Run it with an image that has nc and bash (kdebug's default debug image does), or reach the node over SSH (--via ssh).`,
      evidence: blind.map(probedEvidence),
      // another way than the one that could not probe
      next: otherWay(ctx, ctx.service!).next,
      service: ctx.servicePortName(port),
      ...(nodes.length === 1 ? { node: nodes[0] } : { nodes }),
    }),
  ];
}

/** An address some nodes that ran probes did not probe: nothing is said of it from there. */
export interface Unprobed {
  target: string;
  nodes: string[];
}

/** Addresses not probed from nodes that probed others (a probe lost, a family left out, the
 * endpoints past the first 16): a skip that names them, never passed over. */
export function notProbed(
  ctx: CheckContext,
  what: string,
  items: Unprobed[],
  port: ServicePort,
): Finding[] {
  if (items.length === 0) return [];
  const nodes = [...new Set(items.flatMap((u) => u.nodes))];
  return [
    finding('probe-not-observed', 'skip', `${what} not probed from ${listFew(nodes, 3)}`, {
      explanation: `No probe of ${items.length === 1 ? items[0]!.target : `${count(items.length, 'address', 'addresses')}`} from ${listFew(nodes, 3)} was recorded, so nothing is said of how ${items.length === 1 ? 'it answers' : 'they answer'} from there.`,
      evidence: items.map((u) =>
        unseen(
          `${u.target}: not probed from ${listFew(u.nodes, 3)}`,
          u.nodes.length === 1 ? u.nodes[0] : undefined,
        ),
      ),
      service: ctx.servicePortName(port),
    }),
  ];
}

/** Linux nodes read (or tried) that ran no probe while others did: the step speaks for the
 * others only. */
export function idleNodes(ctx: CheckContext): Finding[] {
  const idle = idleProbers(ctx);
  if (idle.length === 0) return [];
  return [
    finding('probe-not-observed', 'skip', `no probe from ${listFew(idle, 3)}`, {
      explanation: `The Service was probed from ${listFew(probingNodes(ctx), 3)} only, so nothing is said of how it answers from ${listFew(idle, 3)}.`,
      evidence: idle.map((n) => unseen(`${n}: no probe recorded`, n)),
      ...(idle.length === 1 ? { node: idle[0] } : { nodes: idle }),
    }),
  ];
}
