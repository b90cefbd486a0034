// Hand-made Reports, drift and walks for frame tests: the screens' layout is tested on its own,
// whatever wording the checks use today. IP conventions as in the demo snapshot: Pod CIDR
// 10.244.0.0/16, Service CIDR 10.1.0.0/16, node vm-12-11-centos 10.0.12.11.
import { concluded } from '../../src/core/diagnose.js';
import type { DriftFinding, NodeDrift } from '../../src/core/drift.js';
import type { Finding, Report, Status, Step } from '../../src/core/model.js';
import type { TraceResult } from '../../src/core/trace.js';

export function aFinding(status: Status, title: string, more: Partial<Finding> = {}): Finding {
  return { id: `${status}-finding`, status, title, explanation: '', evidence: [], ...more };
}

export function aStep(id: string, status: Status, findings: Finding[] = []): Step {
  return { id, title: id[0]!.toUpperCase() + id.slice(1), status, findings };
}

export function aReport(steps: Step[]): Report {
  return concluded({
    schemaVersion: 1,
    target: { namespace: 'default', service: 'nginx-svc' },
    context: 'kind-lab',
    status: 'fail',
    service: {
      type: 'ClusterIP',
      clusterIP: '10.1.190.219',
      ports: ['http 8080/TCP -> 80'],
      proxyMode: 'iptables',
    },
    steps,
  });
}

/** Selector typo: step 3 fails, 4 warns because of it, 6 still collecting. */
export const typoReport = aReport([
  aStep('service', 'pass', [aFinding('pass', 'ClusterIP Service 10.1.190.219:8080/TCP')]),
  aStep('ports', 'skip', [aFinding('skip', 'no Pods to compare with')]),
  aStep('selector', 'fail', [
    aFinding('fail', 'selector app=ngnix matches no Pods', {
      id: 'selector-matches-no-pods',
      service: 'default/nginx-svc:http',
      explanation: 'No Pod in default has app=ngnix; 2 Pods of Deployment nginx have app=nginx.',
      evidence: ['spec.selector: app=ngnix', 'Pod nginx-1: app=nginx'],
      next: 'kubectl -n default edit service nginx-svc',
    }),
    aFinding('warn', 'a second, lesser finding', { id: 'second' }),
  ]),
  aStep('endpoints', 'warn', [aFinding('warn', 'no endpoints (follows from the selector)')]),
  aStep('dns', 'pass', [aFinding('pass', 'CoreDNS up')]),
  aStep('kube-proxy', 'pending', [aFinding('pending', 'waiting for the node reads')]),
]);

function aDriftFinding(
  f: Partial<DriftFinding> & Pick<DriftFinding, 'id' | 'title'>,
): DriftFinding {
  return {
    severity: 'error',
    node: 'vm-12-11-centos',
    message: '',
    expected: [],
    actual: [],
    ...f,
  };
}

/** A node still sending half of nginx-svc to a Pod that is gone. */
export const staleDrift: NodeDrift = {
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
