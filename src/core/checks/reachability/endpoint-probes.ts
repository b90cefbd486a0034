// The connections straight to each endpoint, bypassing the Service: refused or unanswered, and why.
import type { ServicePort } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { kubectl, onNode, valid, w } from '../../findings/next-command.js';
import {
  consequence,
  endpointSlicesOf,
  findingOf,
  list,
  noPodHas,
  podsWithAddress,
} from '../check.js';
import type { CheckContext } from '../context.js';
import {
  connectProbe,
  PROBED_ENDPOINTS,
  probingNodes,
  addressOf,
  observed,
  probed,
  probedEvidence,
  refused,
  type Probed,
} from './probes.js';
import { policiesFor } from './network-policy.js';
import type { Unprobed } from './not-observed.js';

const finding = findingOf('reachability');

/** Findings of earlier steps that explain a connection failing. */
export const ENDPOINT_CAUSES = [
  'target-port-not-exposed',
  'port-protocol-mismatch',
  'endpoint-not-ready',
  'no-ready-endpoints',
  'selector-matches-no-pods',
];

export function endpointProbes(
  ctx: CheckContext,
  port: ServicePort,
): {
  findings: Finding[];
  all: Probed[];
  blind: Probed[];
  unprobed: Unprobed[];
  beyond: string[];
} {
  const findings: Finding[] = [];
  const all: Probed[] = [];
  const blind: Probed[] = [];
  const unprobed: Unprobed[] = [];
  const beyond: string[] = [];
  const probing = probingNodes(ctx);
  const cause = ctx.causedBy(...ENDPOINT_CAUSES);
  const policies = policiesFor(ctx, port);
  for (const [i, e] of ctx.endpoints(port).entries()) {
    const probe = connectProbe(e.ip, e.port, port.protocol);
    if (!probe) continue;
    const ran = probed(ctx, probe);
    blind.push(...ran.filter((p) => !observed(p)));
    const by = new Set(ran.map((p) => p.node));
    const missing = probing.filter((n) => !by.has(n));
    // past the plan's first endpoints none is probed, by design: counted, said apart
    if (ran.length === 0 && i >= PROBED_ENDPOINTS) beyond.push(addressOf(ctx, port, e.ip, e.port));
    else if (missing.length > 0)
      unprobed.push({ target: addressOf(ctx, port, e.ip, e.port), nodes: missing });
    const got = ran.filter(observed);
    all.push(...got);
    const failed = got.filter((p) => p.result.status === 'fail');
    if (failed.length === 0) continue;
    const who = e.podName ? `Pod ${e.podName}${e.nodeName ? ` on ${e.nodeName}` : ''}` : e.ip;
    const r = failed.find(refused);
    const from = [...new Set(failed.map((p) => p.node))];
    // an address no Pod has: said before any network cause is offered
    const nobody = !e.podName && noPodHas(ctx, e.ip);
    // the Pod answers from its own node and times out only from others: the Pod is up, and what
    // is left is the network between the nodes
    const home = e.podName ? e.nodeName : undefined;
    const between =
      !r &&
      home !== undefined &&
      got.some((p) => p.node === home && p.result.status === 'pass') &&
      from.every((n) => n !== home);
    const policed =
      policies.length > 0
        ? ` NetworkPolicy ${list(policies.map((x) => x.name))} selects this Pod: traffic its rules do not allow is dropped like this.`
        : '';
    findings.push(
      consequence(
        finding(
          'endpoint-unreachable',
          'fail',
          `endpoint ${addressOf(ctx, port, e.ip, e.port)}: ${failed[0]!.result.detail}`,
          {
            explanation: nobody
              ? `No Pod and no node has ${e.ip}: the EndpointSlice lists an address written by hand, and the connection to it ${r ? 'was refused' : `got no answer from ${list(failed.map((p) => p.node))}`}. Whatever holds ${e.ip} (outside the cluster's Pods, or nothing at all) does not ${r ? 'listen on' : 'answer on'} port ${e.port}: check the address in the EndpointSlice before the network.`
              : between
                ? `The connection straight to ${who}, bypassing the Service, connects from ${home}, its own node, and got no answer from ${list(from)}: the Pod is up and listens on port ${e.port}, so the packets are lost between ${list(from)} and ${home}, on the Pod network's path between the nodes (the CNI's overlay or tunnel, or the routes to ${home}'s Pods) or at a firewall between them.${policed} The route ${from[0]} takes to ${e.ip} shows which path that is.`
                : r
                  ? `The connection straight to ${who}, bypassing the Service, was refused: the Pod is there, but nothing listens on port ${e.port} in it. Either the application listens on another port (check targetPort) or it only listens on 127.0.0.1.`
                  : `The connection straight to ${who}, bypassing the Service, got no answer from ${list(failed.map((p) => p.node))}: the packets are lost between the node and the Pod (the Pod network or overlay between nodes, a NetworkPolicy, or a host firewall), or the Pod is hung.${policed}`,
            evidence: got.map(probedEvidence),
            next: nobody
              ? endpointSlicesOf(ctx.service!, 'yaml')
              : between
                ? onNode(from[0]!, ['ip', 'route', 'get', valid.ip(e.ip)])
                : e.podName
                  ? // an ephemeral busybox shares the Pod's network: its netstat shows what listens
                    kubectl(
                      ctx.service!.namespace,
                      'debug',
                      '-it',
                      valid.name(e.podName),
                      '--image=busybox',
                      w`--target=${valid.name(e.pod?.containers[0]?.name ?? 'app')}`,
                      '--',
                      'netstat',
                      '-tln',
                    )
                  : podsWithAddress(e.ip),
            // where it was observed, as for every probe: the endpoint's node is in the text
            ...(from.length === 1 ? { node: from[0] } : { nodes: from }),
            service: ctx.servicePortName(port),
          },
        ),
        cause,
      ),
    );
  }
  return { findings, all, blind, unprobed, beyond: probing.length > 0 ? beyond : [] };
}
