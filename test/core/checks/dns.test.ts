import assert from 'node:assert/strict';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import { describe, it } from 'node:test';
import { dnsCheck } from '../../../src/core/checks/dns/dns.js';
import { diagnose } from '../../../src/core/diagnose.js';
import type { KubeObject } from '../../../src/core/model.js';
import {
  aNode,
  aService,
  anEndpointSlice,
  facts,
  healthy,
  ids,
  kubeDns,
  probeOut,
  replace,
  run,
  TARGET,
  twoNodes,
  webPods,
} from './builders.js';
import { allModes } from '../../support/modes.js';

/** A next command as the person's terminal shows it. */
const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

const FQDN = 'web.default.svc.cluster.local';
const lookup = (answer: string) => ({ 'node-a': { [`dns-lookup_A_${FQDN}_10.96.0.10`]: answer } });
const withoutDns = (objects: KubeObject[]) =>
  objects.filter((o) => o.metadata?.namespace !== 'kube-system');

describe('DNS step', () => {
  const cases: {
    name: string;
    objects: KubeObject[];
    nodes?: Record<string, Record<string, string>>;
    want: string[];
  }[] = [
    {
      name: 'CoreDNS up, no lookup recorded',
      objects: healthy(),
      want: ['coredns-ready:pass', 'dns-names:skip', 'dns-lookup-not-recorded:skip'],
    },
    {
      name: 'the lookup answers the ClusterIP',
      objects: healthy(),
      nodes: lookup(probeOut.dig(FQDN, 'A', ['10.96.0.50'])),
      want: ['dns-answer-ok:pass', 'coredns-ready:pass', 'dns-names:skip'],
    },
    {
      name: 'the lookup answers a stale IP',
      objects: healthy(),
      nodes: lookup(probeOut.dig(FQDN, 'A', ['10.96.7.7'])),
      want: ['coredns-ready:pass', 'dns-names:skip', 'dns-answer-wrong:fail'],
    },
    {
      name: 'CoreDNS not ready',
      objects: [...withoutDns(healthy()), ...kubeDns({ ready: false })],
      want: ['coredns-unavailable:fail', 'dns-names:skip', 'dns-lookup-not-recorded:skip'],
    },
    {
      name: 'CoreDNS down and the lookup refused: one failure',
      objects: [...withoutDns(healthy()), ...kubeDns({ ready: false })],
      nodes: lookup(probeOut.digRefused('10.96.0.10')),
      want: ['coredns-unavailable:fail', 'dns-names:skip', 'dns-answer-wrong:warn'],
    },
    {
      name: 'one of two CoreDNS Pods ready',
      objects: [
        ...withoutDns(healthy()),
        ...kubeDns({ pods: 2 }).map((o, i) =>
          i === 3 ? kubeDns({ pods: 2, ready: false })[3]! : o,
        ),
      ],
      want: ['coredns-degraded:warn', 'dns-names:skip', 'dns-lookup-not-recorded:skip'],
    },
    {
      name: 'no cluster DNS recorded at all',
      objects: [aService(), anEndpointSlice(), ...webPods(), ...twoNodes()],
      want: ['dns-names:skip', 'coredns-not-recorded:skip'],
    },
  ];
  for (const c of cases)
    it(c.name, () => assert.deepEqual(ids(run(dnsCheck, facts(c.objects, c.nodes))), c.want));

  it('says plainly when there are no CoreDNS Pods at all', () => {
    const objects = [...withoutDns(healthy()), ...kubeDns().filter((o) => o.kind !== 'Pod')].map(
      (o) =>
        o.kind === 'EndpointSlice' && o.metadata?.namespace === 'kube-system'
          ? { ...o, endpoints: [] }
          : o,
    );
    const [f] = run(dnsCheck, facts(objects));
    assert.match(f!.explanation, /no CoreDNS Pods at all/);
    assert.equal(line(f!.next), 'kubectl -n kube-system scale deployment coredns --replicas=2');
  });

  // before: "there are no CoreDNS Pods at all" from a capture that read no Pod
  it('with no Pod captured, does not say there are no CoreDNS Pods', () => {
    const objects = [...withoutDns(healthy()), ...kubeDns()]
      .filter((o) => o.kind !== 'Pod')
      .map((o) =>
        o.kind === 'EndpointSlice' && o.metadata?.namespace === 'kube-system'
          ? { ...o, endpoints: [] }
          : o,
      );
    const [f] = run(dnsCheck, facts(objects));
    assert.equal(f!.id, 'coredns-unavailable');
    assert.doesNotMatch(f!.explanation, /no CoreDNS Pods at all/);
    assert.match(f!.explanation, /whether CoreDNS Pods run is not known/);
    assert.ok(f!.evidence.some((e) => e.kind === 'not-observed'));
    assert.equal(line(f!.next), 'kubectl -n kube-system get pods -l k8s-app=kube-dns -o wide');
  });

  it('expects the ready Pod IPs for a headless Service, and SRV records per named port', () => {
    const objects = replace(
      healthy(),
      'Service',
      'web',
      aService({ spec: { clusterIP: 'None', clusterIPs: ['None'] } }),
    );
    const names = run(dnsCheck, facts(objects)).find((f) => f.id === 'dns-names')!;
    assert.ok(
      names.evidence.map(evidenceText).includes(`expected: ${FQDN} A -> 10.244.0.5, 10.244.1.6`),
      names.evidence.map(evidenceText).join('\n'),
    );
    assert.ok(
      names.evidence
        .map(evidenceText)
        .includes(
          `expected: _http._tcp.${FQDN} SRV -> 0 50 8080 10-244-0-5.${FQDN}., 0 50 8080 10-244-1-6.${FQDN}.`,
        ),
      names.evidence.map(evidenceText).join('\n'),
    );
    const ok = run(
      dnsCheck,
      facts(objects, lookup(probeOut.dig(FQDN, 'A', ['10.244.1.6', '10.244.0.5']))),
    );
    assert.equal(ok[0]!.id, 'dns-answer-ok');
  });

  it('expects a CNAME for an ExternalName Service', () => {
    const objects = replace(
      healthy(),
      'Service',
      'web',
      aService({
        spec: {
          type: 'ExternalName',
          externalName: 'db.example.com',
          clusterIP: undefined,
          clusterIPs: undefined,
          selector: undefined,
          ports: [],
        },
      }),
    );
    const nodes = {
      'node-a': {
        [`dns-lookup_CNAME_${FQDN}_10.96.0.10`]: probeOut.dig(FQDN, 'CNAME', ['db.example.com.']),
      },
    };
    assert.deepEqual(ids(run(dnsCheck, facts(objects, nodes))).slice(0, 1), ['dns-answer-ok:pass']);
  });

  it('reads the cluster domain from the Corefile', () => {
    const corefile: KubeObject = {
      kind: 'ConfigMap',
      metadata: { name: 'coredns', namespace: 'kube-system' },
      data: {
        Corefile: '.:53 {\n    kubernetes corp.internal in-addr.arpa ip6.arpa {\n    }\n}\n',
      },
    };
    const names = run(dnsCheck, facts([...healthy(), corefile])).find((f) => f.id === 'dns-names')!;
    assert.equal(names.title, 'web, web.default and web.default.svc.corp.internal');
  });

  it('explains the search path and ndots', () => {
    const names = run(dnsCheck, facts(healthy())).find((f) => f.id === 'dns-names')!;
    assert.match(
      names.explanation,
      /From any other namespace the short name fails: use "web.default"/,
    );
    assert.match(names.explanation, /ndots:5/);
  });

  it('is pending while the lookups run on the nodes', () => {
    assert.deepEqual(ids(run(dnsCheck, facts(healthy()), { collecting: { nodes: true } })), [
      'pending:pending',
    ]);
  });

  it('the same answer on many nodes is one finding, every node in it', () => {
    const names = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e', 'node-f'];
    const objects = [
      ...withoutDns(healthy()),
      ...kubeDns({ ready: false }),
      ...names.slice(2).map((n, i) => aNode(n, `192.0.2.${20 + i}`, `10.244.${5 + i}.0/24`)),
    ];
    const key = `dns-lookup_A_${FQDN}_10.96.0.10`;
    const everywhere = (answer: string) =>
      Object.fromEntries(names.map((n) => [n, { [key]: answer }]));
    const refused = run(dnsCheck, facts(objects, everywhere(probeOut.digRefused('10.96.0.10'))));
    const wrong = refused.filter((f) => f.id === 'dns-answer-wrong');
    assert.equal(wrong.length, 1, JSON.stringify(refused.map((f) => f.title)));
    assert.deepEqual(wrong[0]!.nodes, names);
    assert.match(
      wrong[0]!.title,
      /^lookup of web\.default\.svc\.cluster\.local refused on 6 nodes \(node-a, node-b, node-c and 3 more\)/,
    );
    assert.equal(wrong[0]!.evidence.filter((e) => e.kind === 'observed').length, 6);
    const right = run(
      dnsCheck,
      facts(
        [...withoutDns(healthy()), ...kubeDns(), ...objects.filter((o) => o.kind === 'Node')],
        everywhere(probeOut.dig(FQDN, 'A', ['10.96.0.50'])),
      ),
    );
    assert.deepEqual(
      right.filter((f) => f.id === 'dns-answer-ok').map((f) => f.nodes?.length),
      [6],
    );
  });

  it('fails only at DNS when CoreDNS is down and the Service is fine', () => {
    const report = diagnose(
      facts(
        [...withoutDns(healthy()), ...kubeDns({ ready: false })],
        lookup(probeOut.digRefused('10.96.0.10')),
      ),
      TARGET,
      { code: allModes },
    );
    assert.deepEqual(
      report.steps.filter((s) => s.status === 'fail').map((s) => s.id),
      ['dns'],
    );
  });
});
