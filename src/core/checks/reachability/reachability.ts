// Step 8: does a connection get through? The recorded probes from the nodes: TCP (or UDP) to
// ClusterIP:port and to each endpoint directly, ICMP echo to the ClusterIP. Then why ping and
// curl disagree in this cluster's proxy mode, with the rules (and the packet walk) as proof.
import { unseen } from '../../findings/evidence.js';
import type { Finding } from '../../model.js';
import { kdebug, valid } from '../../findings/next-command.js';
import { type Check, count, findingOf, listFew, pending } from '../check.js';
import { ciliumNodes, replacement } from '../kube-proxy/replacement.js';
import { PROBED_ENDPOINTS, probeText, probedEvidence, sharesNumber } from './probes.js';
import { conntrackFindings } from './conntrack.js';
import { idleNodes, notObserved, notProbed } from './not-observed.js';
import { endpointProbes } from './endpoint-probes.js';
import { clusterIpProbes } from './clusterip-probes.js';
import { pingExplained } from './ping.js';
import { networkPolicies } from './network-policy.js';

const finding = findingOf('reachability');

export const reachabilityCheck: Check<'reachability'> = {
  id: 'reachability',
  title: 'Reachability',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName'],
    id: 'reachability-not-checked',
    title: 'ExternalName: the external name is not probed',
    explanation: (svc) =>
      `Clients connect to ${svc.externalName} directly; kdebug does not probe addresses outside the cluster.`,
  },
  run(ctx) {
    const svc = ctx.service!;
    const out: Finding[] = [];
    for (const port of svc.ports) {
      // the endpoints are probed first: their failures explain the ClusterIP's, shown first
      const eps = endpointProbes(ctx, port);
      // each family's cluster IP is probed and judged on its own
      if (!svc.headless)
        for (const ip of svc.clusterIPs)
          out.push(...clusterIpProbes(ctx, svc, port, eps.findings, ip, eps.all));
      out.push(...eps.findings);
      const of = sharesNumber(ctx, port) ? ` of ${port.port}/${port.protocol}` : '';
      out.push(...notObserved(ctx, `the endpoints${of}`, eps.blind, port));
      const unprobed = eps.unprobed;
      out.push(
        ...notProbed(
          ctx,
          unprobed.length === 1
            ? `endpoint ${unprobed[0]!.target}`
            : `${count(unprobed.length, 'endpoint')}${of}`,
          unprobed,
          port,
        ),
      );
      if (eps.beyond.length > 0)
        out.push(
          finding(
            'probe-not-observed',
            'skip',
            `${count(eps.beyond.length, 'endpoint')}${of} past the first ${PROBED_ENDPOINTS} not probed`,
            {
              explanation: `kdebug probes the first ${PROBED_ENDPOINTS} endpoints of each port from each node it reads; the other ${count(eps.beyond.length, 'endpoint')} of ${port.port}/${port.protocol} were not probed, so nothing is said of how they answer.`,
              evidence: [
                unseen(
                  `not probed: ${listFew(eps.beyond, 3)} (the first ${PROBED_ENDPOINTS} of each port are)`,
                ),
              ],
              service: ctx.servicePortName(port),
            },
          ),
        );
      // probes count node x endpoint: the title counts the endpoints
      const answering = new Set(eps.all.map((p) => probeText(p.probe))).size;
      if (eps.all.length > 0 && eps.findings.length === 0)
        out.push(
          finding(
            'endpoints-reachable',
            'pass',
            `${count(answering, 'endpoint')}${of} answer${answering === 1 ? 's' : ''} directly on the targetPort`,

            {
              explanation: 'Connections straight to the Pods, bypassing the Service, get through.',
              evidence: eps.all.map(probedEvidence),
              service: ctx.servicePortName(port),
            },
          ),
        );
    }
    if (out.length === 0) {
      if (ctx.waiting('nodes')) return pending('waiting for the probes from the nodes');
      out.push(
        ctx.options.invocation?.snapshot !== undefined
          ? finding('probes-not-recorded', 'skip', 'no probe results recorded', {
              explanation:
                'kdebug probes the ClusterIP and each endpoint from the nodes when it can reach them; this snapshot holds no probe results.',
              evidence: [unseen('no probe results in the snapshot')],
              advice: 'Run it live, with access to the nodes, for the probes.',
              next: kdebug(['svc', valid.name(svc.name), '-n', valid.namespace(svc.namespace)], {
                live: true,
              }),
            })
          : finding('probes-not-recorded', 'skip', 'no probe ran: no node could run one', {
              explanation:
                'kdebug probes the ClusterIP and each endpoint from the nodes it can reach; it reached none that can run a probe (the lines on stderr say, per node, which way was tried and why it failed).',
              evidence: [unseen('no node ran a probe')],
            }),
      );
    }
    out.push(...idleNodes(ctx));
    out.push(...conntrackFindings(ctx, svc));
    for (const port of svc.ports) out.push(...networkPolicies(ctx, port));
    if (!svc.headless && (ciliumNodes(ctx).length > 0 || !replacement(ctx)))
      out.push(...pingExplained(ctx, svc));
    return out;
  },
};
