// Step 4's endpoints that are not ready: why, from the Pod's conditions and containers, or from
// its node where the API says that node is down (the node is then the cause, its Pods follow).
import { read } from '../../findings/evidence.js';
import type { Service } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { kubectl, valid } from '../../findings/next-command.js';
import { canonicalAddress, hostPort } from '../../ipv6.js';
import { endpointSlicesOf, findingOf } from '../check.js';
import type { CheckContext, PortEndpoint } from '../context.js';
import { describeNode, downTaintOnly, nodeDown, type NodeDown } from '../node-health.js';
import { whyNotReady } from '../pod-health.js';
import { connectProbe, probeSeen } from '../reachability/probes.js';

const finding = findingOf('endpoints');

const state = (e: PortEndpoint) =>
  e.ready
    ? 'ready'
    : e.serving && e.terminating
      ? 'terminating (still serving)'
      : e.terminating
        ? 'terminating'
        : 'not ready';

/** The endpoint's Pod has IPs and its address is none of them: the slice names the wrong Pod. */
export const notPodsAddress = (e: PortEndpoint): boolean =>
  e.pod !== undefined &&
  e.pod.podIPs.length > 0 &&
  !e.pod.podIPs.some((x) => canonicalAddress(x) === canonicalAddress(e.ip));

export const endpointLine = (e: PortEndpoint) =>
  `${hostPort(e.ip, e.port)} ${state(e)}${e.podName ? `  Pod ${e.podName}` : ''}${notPodsAddress(e) ? ` (whose IP is ${e.pod!.podIPs.join(', ')}, not ${e.ip})` : ''}${e.nodeName ? ` on ${e.nodeName}` : ''}`;

export function notReady(
  ctx: CheckContext,
  svc: Service,
  e: PortEndpoint,
  anyReady: boolean,
): Finding {
  const down = nodeDown(ctx, e.nodeName);
  if (down) return onNodeDown(svc, e, anyReady, down);
  const taint = downTaintOnly(ctx, e.nodeName);
  const why = e.pod ? whyNotReady(e.pod) : undefined;
  const who = e.podName ? `Pod ${e.podName}` : e.ip;
  // a direct connection that works means the application runs: the probe's own check fails
  const probe = connectProbe(
    e.ip,
    e.port,
    svc.ports.find((p) => ctx.endpoints(p).includes(e))?.protocol ?? 'TCP',
  );
  const direct = probe
    ? ctx.nodeNames().flatMap((n) => {
        const r = ctx.probe(n, probe);
        return r ? [{ n, r }] : [];
      })
    : [];
  const answers = why?.probeFailing && direct.some((d) => d.r.status === 'pass');
  return finding(
    'endpoint-not-ready',
    anyReady ? 'warn' : 'fail',
    `${who} is not ready: ${why?.short ?? state(e)}`,
    {
      explanation: `${who} (${e.ip}) is selected, but ${why?.reason ?? 'it is not ready'}. A Pod that is not ready stays in the EndpointSlice with ready=false and gets no Service traffic${anyReady ? ' while the other endpoints take it' : ''}.${answers ? ` It does accept connections on port ${e.port} (a direct probe connected), so the application runs: it is the readiness check itself that fails. Check what the probe asks for against what the application serves; the Pod's events give the probe's error.` : ''}`,
      evidence: [
        read(`EndpointSlice ${e.slice}: ${endpointLine(e)}`),
        ...(why?.evidence ?? []),
        ...(probe ? direct.map((d) => probeSeen(d.n, probe, d.r)) : []),
        ...(taint ? [taint] : []),
      ],
      next: e.podName
        ? why?.crashed
          ? kubectl(svc.namespace, 'logs', valid.name(e.podName), '--previous')
          : kubectl(svc.namespace, 'describe', 'pod', valid.name(e.podName))
        : endpointSlicesOf(svc, 'yaml'),
      node: e.nodeName,
    },
  );
}

/** A Pod not ready on a node the API says is down: the node is the cause, its Pods follow. */
function onNodeDown(svc: Service, e: PortEndpoint, anyReady: boolean, down: NodeDown): Finding {
  const who = e.podName ? `Pod ${e.podName}` : e.ip;
  const kubelet =
    down.status === 'Unknown'
      ? 'its kubelet stopped posting status, so the node controller marked its Pods not ready'
      : 'its kubelet reports it not ready, and its Pods with it';
  return finding(
    'endpoint-node-not-ready',
    anyReady ? 'warn' : 'fail',
    `${who} is not ready: its node ${down.node} is ${down.short}`,
    {
      explanation: `${who} (${e.ip}) is selected, but it runs on node ${down.node}, which is not Ready: ${kubelet}. The endpoint stays in the EndpointSlice with ready=false and gets no Service traffic${anyReady ? ' while the other endpoints take it,' : ''} until the node is back or its Pods are evicted. The cause is the node (its kubelet, runtime or network), not the Pod.`,
      evidence: [
        ...down.evidence,
        read(`EndpointSlice ${e.slice}: ${endpointLine(e)}`),
        ...(e.pod ? whyNotReady(e.pod).evidence : []),
      ],
      next: describeNode(down.node),
      node: down.node,
    },
  );
}
