// Fixtures for the frame tests: a Report the core builds from the diagnosis tests' builders (IP
// conventions of test/core/checks/builders.ts), and hand-made drift and walks in the demo
// snapshot's addresses (Pod CIDR 10.244.0.0/16, Service CIDR 10.1.0.0/16, node vm-12-11-centos
// 10.0.12.11).
import { diagnose } from '../../src/core/diagnose.js';
import {
  driftFinding,
  type DriftId,
  type DriftSaid,
  type NodeDrift,
} from '../../src/core/dataplane/drift.js';
import type { Report, Severity } from '../../src/core/model.js';
import type { TraceResult } from '../../src/core/dataplane/trace/trace.js';
import {
  aService,
  anEndpointSlice,
  facts,
  kubeDns,
  kubeProxy,
  TARGET,
  twoNodes,
  webPods,
} from '../core/checks/builders.js';
import { allModes } from '../support/modes.js';

/** Selector typo (app=wbe), the node reads still running: step 3 fails, 4 follows from it, the
 * steps that read the nodes pend. Built by the core from the diagnosis tests' builders. */
export const typoReport: Report = diagnose(
  facts([
    aService({ spec: { selector: { app: 'wbe' } } }),
    anEndpointSlice({ endpoints: [] }),
    ...webPods(),
    ...twoNodes(),
    ...kubeDns(),
    ...kubeProxy(),
  ]),
  TARGET,
  { code: allModes, collecting: { nodes: true } },
);

function aDriftFinding({
  id,
  severity = 'error',
  message = '',
  ...said
}: Partial<DriftSaid> & Pick<DriftSaid, 'title'> & { id: DriftId; severity?: Severity }) {
  const at = { node: 'vm-12-11-centos', source: 'nodes/vm-12-11-centos/iptables-save.txt' };
  return driftFinding(id, { message, ...said }, at, severity);
}

/** A node still sending half of nginx-svc to a Pod that is gone. */
export const staleDrift: NodeDrift = {
  mode: 'iptables',
  node: 'vm-12-11-centos',
  source: 'nodes/vm-12-11-centos/iptables-save.txt',
  servicePorts: 5,
  drifted: true,
  findings: [
    aDriftFinding({
      id: 'endpoint-stale',
      service: 'default/nginx-svc:http',
      title: 'DNAT to 10.244.1.9:80, no longer an endpoint',
      message: 'Half of new connections go to a Pod that is gone.',
      expected: ['-t nat -A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-FNO4E6JYD7EGUHTP'],
      actual: ['-A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-STALE0000000000'],
    }),
    aDriftFinding({
      id: 'orphan-chain',
      severity: 'warning',
      title: 'KUBE-SVC-OLD0000000000000 is reached by nothing',
      actual: ['-A KUBE-SVC-OLD0000000000000 -j KUBE-SEP-OLD0000000000000'],
    }),
  ],
};

/** Pod 10.244.1.7 to nginx-svc: half to the other node, half back to itself (hairpin). */
export const hairpinWalk: TraceResult = {
  packet: { src: '10.244.1.7', dst: '10.1.190.219', dport: 8080, protocol: 'tcp', fromHost: false },
  enters: 'nat PREROUTING',
  notes: [],
  outcomes: [
    {
      probability: 0.5,
      destination: '10.244.0.3:80',
      masquerade: false,
      verdict: 'ACCEPT',
      delivery: 'forward',
      mark: 0,
      rules: [
        {
          table: 'nat',
          chain: 'KUBE-SVC-ELCM5PCEQWBTUJ2I',
          line: 92,
          rule: '-A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability 0.5 -j KUBE-SEP-SMDVMBZNJPO5AA7R',
          effect: '50% branch, jump KUBE-SEP-SMDVMBZNJPO5AA7R',
        },
      ],
      assumptions: [],
    },
    {
      probability: 0.5,
      destination: '10.244.1.7:80',
      masquerade: true,
      verdict: 'ACCEPT',
      delivery: 'forward',
      mark: 0x4000,
      rules: [],
      assumptions: ['conntrack state NEW'],
    },
  ],
};
