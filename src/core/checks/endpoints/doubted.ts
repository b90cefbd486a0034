// Ready endpoints the EndpointSlices list that the API's other objects put in doubt: on a node
// that is down, of a Pod that says it is not ready. Their findings, and the one test that keeps
// them out of the step's pass.
import { read } from '../../findings/evidence.js';
import type { Service } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { kubectl } from '../../findings/next-command.js';
import { count, findingOf, list } from '../check.js';
import type { CheckContext, PortEndpoint } from '../context.js';
import { whyNotReady } from '../pod-health.js';
import { describeNode, nodeDown, type NodeDown } from '../node-health.js';
import { endpointLine, notPodsAddress } from './not-ready.js';

const finding = findingOf('endpoints');

/** Ready endpoints on a node the API says is down (Ready False or Unknown): that ready is the
 * last state its kubelet posted, said on each such node, never passed without it. */
export function readyOnDownNodes(ctx: CheckContext, svc: Service, all: PortEndpoint[]): Finding[] {
  const byNode = new Map<string, { down: NodeDown; eps: PortEndpoint[] }>();
  for (const e of all.filter((x) => x.ready)) {
    const down = nodeDown(ctx, e.nodeName ?? e.pod?.nodeName);
    if (!down) continue;
    const at = byNode.get(down.node) ?? { down, eps: [] };
    at.eps.push(e);
    byNode.set(down.node, at);
  }
  return [...byNode.values()].map(({ down, eps }) =>
    finding(
      'endpoint-node-not-ready',
      'warn',
      `${count(eps.length, 'ready endpoint')} on ${down.node}, whose node is ${down.short}`,
      {
        explanation: `${
          down.status === 'Unknown'
            ? `The kubelet of ${down.node} stopped posting status: the ready the EndpointSlice and the Pod hold for ${list(eps.map((e) => e.ip))} is the last state it posted, not known now.`
            : `${down.node} reports itself not ready: the ready its Pods hold is what its kubelet last posted, while the node itself is not healthy.`
        } The EndpointSlice still lists ${eps.length === 1 ? 'it' : 'them'} ready, so ${svc.namespace}/${svc.name}'s traffic is still sent there, and fails where the node is down, until the node controller marks ${eps.length === 1 ? 'the Pod' : 'the Pods'} not ready.`,
        evidence: [
          ...down.evidence,
          ...eps.map((e) => read(`EndpointSlice ${e.slice}: ${endpointLine(e)} (last posted)`)),
        ],
        next: describeNode(down.node),
        node: down.node,
      },
    ),
  );
}

/** Endpoints the EndpointSlice calls ready whose Pod says Ready=False: the slice lags the Pod, and
 * traffic is still sent to a Pod whose readiness check fails (a node down says its own). */
export function readyInSliceOnly(ctx: CheckContext, svc: Service, all: PortEndpoint[]): Finding[] {
  // publishNotReadyAddresses marks every selected Pod ready: said by its own finding
  if (svc.publishNotReadyAddresses) return [];
  const lagging = all.filter(
    (e) =>
      e.ready &&
      e.pod &&
      !notPodsAddress(e) &&
      e.pod.conditions.some((c) => c.type === 'Ready' && c.status === 'False') &&
      !nodeDown(ctx, e.nodeName ?? e.pod.nodeName),
  );
  return lagging.map((e) => {
    const why = whyNotReady(e.pod!);
    return finding(
      'endpoint-not-ready',
      'warn',
      `Pod ${e.pod!.name} is not ready (${why.short}), but the EndpointSlice still lists it ready`,
      {
        explanation: `Pod ${e.pod!.name} says Ready=False (${why.reason}), yet EndpointSlice ${e.slice} lists ${e.ip} ready: the slice lags the Pod (the endpoint controller in kube-controller-manager is behind or not running, or the slice was written by hand). Until it catches up, the Service's traffic is still sent to a Pod that is not ready.`,
        evidence: [read(`EndpointSlice ${e.slice}: ${endpointLine(e)}`), ...why.evidence],
        next: kubectl(
          'kube-system',
          'logs',
          '-l',
          'component=kube-controller-manager',
          '--tail=50',
        ),
        ...(e.nodeName ? { node: e.nodeName } : {}),
      },
    );
  });
}

/** A ready endpoint this step's own findings put in doubt (its address not its Pod's, its node
 * down, its Pod not ready): never counted in a pass, said by its finding instead. */
export function inDoubt(ctx: CheckContext, svc: Service, e: PortEndpoint): boolean {
  if (notPodsAddress(e) || nodeDown(ctx, e.nodeName ?? e.pod?.nodeName)) return true;
  return (
    !svc.publishNotReadyAddresses &&
    e.pod !== undefined &&
    e.pod.conditions.some((c) => c.type === 'Ready' && c.status === 'False')
  );
}
