// A Cilium node end to end through the analysis: the objects of one of Cilium's own script
// tests, its agent's Pod and ConfigMap, and the frontends table that script expects, recorded as
// the agent's listing on the node. Clean, it has no drift; with a backend taken out and another
// left behind, drift names both; the walk follows the frontends.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { load } from 'js-yaml';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import type { Facts, KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent, aCiliumConfig, aService, anEndpointSlice } from '../../support/builders.js';
import { allModes } from '../../support/modes.js';

const VECTOR = new URL(
  '../../fixtures/cilium/vectors/05-v118-nodeport-two-services/',
  import.meta.url,
).pathname;
const objects = readFileSync(`${VECTOR}objects.yaml`, 'utf8')
  .split(/^---$/m)
  .map((d) => load(d) as KubeObject | null)
  .filter((d): d is KubeObject => !!d);
const frontends = readFileSync(`${VECTOR}expected-frontends.txt`, 'utf8');

const agent = aCiliumAgent('testnode', 'quay.io/cilium/cilium:v1.18.6@sha256:0');
const config = aCiliumConfig();
const client: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'client', namespace: 'test' },
  spec: { nodeName: 'testnode', containers: [{ name: 'c' }] },
  status: { phase: 'Running', podIP: '10.244.9.9', podIPs: [{ ip: '10.244.9.9' }] },
};

function analysis(table: string, backends?: string): Analysis {
  const facts: Facts = {
    objects: [...objects, agent, config, client],
    nodes: {
      testnode: {
        'cilium-frontends': table,
        ...(backends !== undefined ? { 'cilium-backends': backends } : {}),
      },
    },
    meta: { source: 'test' } as Facts['meta'],
  };
  return new Analysis(facts, { code: allModes });
}

describe('a Cilium node through the analysis', () => {
  it('is in mode cilium, from the ConfigMap, with the agent release', () => {
    const s = analysis(frontends).state('testnode');
    assert.equal(s.mode.value, 'cilium');
    assert.equal(s.mode.from, 'objects');
    assert.equal(s.mode.evidence.kind, 'read');
    assert.equal(s.cilium?.version, 'v1.18.6');
  });

  it('reads the frontends into one tree per Service port', () => {
    const trees = analysis(frontends).node('testnode').trees()!;
    const echo = trees.services.find((t) => t.name === 'test/echo:http')!;
    assert.equal(echo.clusterIP, '10.96.50.104');
    assert.deepEqual(echo.nodePorts, [30781]);
    assert.deepEqual(
      echo.endpoints.map((e) => e.probability),
      [0.25, 0.25, 0.25, 0.25],
    );
  });

  it('has no drift where the agent holds what the objects say', () => {
    const d = analysis(frontends).node('testnode').drift();
    assert.deepEqual(d.findings, []);
    assert.equal(d.drifted, false);
  });

  it('names a backend missing and a backend left behind', () => {
    const faulty = frontends.replace(
      '10.244.1.1:80/TCP, 10.244.1.2:80/TCP, 10.244.1.3:80/TCP, 10.244.1.4:80/TCP\n10.96.50.105',
      '10.244.1.1:80/TCP, 10.244.1.2:80/TCP, 10.244.1.3:80/TCP, 10.244.7.7:80/TCP\n10.96.50.105',
    );
    assert.notEqual(faulty, frontends);
    const d = analysis(faulty).node('testnode').drift();
    assert.deepEqual(d.findings.map((f) => [f.id, f.service]).sort(), [
      ['cilium-backend-missing', 'test/echo:http'],
      ['cilium-backend-stale', 'test/echo:http'],
    ]);
    assert.ok(d.drifted);
  });

  it("compares the backends' states where the backends table was read, and says where it was not", () => {
    const backends = readFileSync(`${VECTOR}expected-backends.txt`, 'utf8');
    const terminating = backends.replace(
      '10.244.1.1:80/TCP   test/echo (http)  ',
      '10.244.1.1:80/TCP   test/echo [terminating] (http)',
    );
    assert.notEqual(terminating, backends);
    const read = analysis(frontends, terminating).node('testnode').drift();
    // the backend's state on each frontend that lists it: the ClusterIP and the NodePort
    assert.deepEqual(
      read.findings.map((f) => [f.id, f.title]).sort(),
      ['0.0.0.0:30781/TCP', '10.96.50.104:80/TCP'].map((fe) => [
        'cilium-backend-state-differs',
        `${fe}: backend 10.244.1.1:80/TCP terminating, expected active`,
      ]),
    );
    assert.deepEqual([read.notRead, read.cilium?.states], [undefined, true]);
    // read and empty (its header alone): no state, and nothing unread
    const empty = analysis(frontends, backends.split('\n')[0]!).node('testnode').drift();
    assert.deepEqual([empty.findings, empty.notRead, empty.cilium?.states], [[], undefined, true]);
    // not read: no state compared, and that said
    const unread = analysis(frontends).node('testnode').drift();
    assert.deepEqual(unread.findings, []);
    assert.equal(unread.cilium?.states, false);
    assert.deepEqual(
      (unread.notRead ?? []).map((n) => [n.id, n.title, n.drift.actual]),
      [
        [
          'table-not-captured',
          'backend states not compared',
          ['nodes/testnode/cilium-frontends.txt: no backends table read with it'],
        ],
      ],
    );
  });

  it('names a frontend the agent does not hold, for one Service too', () => {
    const without = frontends
      .split('\n')
      .filter((l) => !l.startsWith('0.0.0.0:30782'))
      .join('\n');
    const a = analysis(without);
    const scope = a.view.services.filter((s) => s.name === 'echo2');
    const d = a.node('testnode').drift(scope);
    assert.deepEqual(
      d.findings.map((f) => f.id),
      ['cilium-frontend-missing'],
    );
    assert.match(d.findings[0]!.title, /0\.0\.0\.0:30782\/TCP/);
  });

  it('walks a Pod to the ClusterIP to each backend, drops it from outside, and routes a ping on', () => {
    const node = analysis(frontends).node('testnode');
    const pod = node.trace({
      src: '10.244.9.9',
      dst: '10.96.50.104',
      dport: 80,
      protocol: 'tcp',
      fromHost: false,
    });
    assert.deepEqual(
      pod.outcomes.map((o) => [o.destination, o.probability]),
      [
        ['10.244.1.1:80', 0.25],
        ['10.244.1.2:80', 0.25],
        ['10.244.1.3:80', 0.25],
        ['10.244.1.4:80', 0.25],
      ],
    );
    const outside = node.trace({
      src: '198.51.100.7',
      dst: '10.96.50.104',
      dport: 80,
      protocol: 'tcp',
      fromHost: false,
    });
    assert.deepEqual(
      outside.outcomes.map((o) => o.verdict),
      ['DROP'],
    );
    const ping = node.trace({
      src: '10.244.9.9',
      dst: '10.96.50.104',
      protocol: 'icmp',
      fromHost: false,
    });
    // the echo skips the service lookup (bpf_lxc.c): routed on unchanged, not dropped
    assert.equal(ping.outcomes[0]!.verdict, 'ACCEPT');
    assert.equal(ping.outcomes[0]!.destination, null);
    assert.match(ping.outcomes[0]!.rules[0]!.rule, /ICMP echo skips the service lookup/);
  });

  it("serves a NodePort from outside on the agent's NodePort addresses only", () => {
    // eth0 holds 10.0.0.5 and 10.0.0.9: the agent serves NodePorts on the first (its status)
    const outputs = {
      'cilium-frontends': frontends,
      'cilium-status': 'KubeProxyReplacement:    True   [eth0   10.0.0.5 10.0.0.9]\n',
      'ip-addr': 'eth0             UP             10.0.0.5/24 10.0.0.9/24 \n',
    };
    const walk = (nodeOutputs: Record<string, string>, src: string, dst: string) =>
      new Analysis(
        {
          objects: [...objects, agent, config, client],
          nodes: { testnode: nodeOutputs },
          meta: { source: 'test' } as Facts['meta'],
        },
        { code: allModes },
      )
        .node('testnode')
        .trace({ src, dst, dport: 30781, protocol: 'tcp', fromHost: false }).outcomes;
    const cases: [string, Record<string, string>, string, string, number][] = [
      ['outside, to its NodePort address', outputs, '198.51.100.7', '10.0.0.5', 4],
      ['outside, to its other address', outputs, '198.51.100.7', '10.0.0.9', 0],
      ["a Pod's socket, to any node address", outputs, '10.244.9.9', '10.0.0.9', 4],
    ];
    for (const [what, nodeOutputs, src, dst, backends] of cases)
      assert.equal(
        walk(nodeOutputs, src, dst).filter((o) => o.destination?.startsWith('10.244.1.')).length,
        backends,
        what,
      );
    const refused = walk(outputs, '198.51.100.7', '10.0.0.9')[0]!;
    assert.equal(refused.delivery, 'local');
    assert.match(
      refused.rules[0]!.rule,
      /10\.0\.0\.9 is not a NodePort address of this node \(NodePorts on 10\.0\.0\.5 of eth0, from the status of agent kube-system\/cilium-testnode\)/,
    );
    // without the status, the NodePort addresses are not known: no address is ruled out
    const { 'cilium-status': _s, ...unread } = outputs;
    assert.equal(walk(unread, '198.51.100.7', '10.0.0.9').length, 4);
  });
});

describe('a real bpf lb list without the flag column (Cilium before 1.8), the only table read', () => {
  it('says nothing of the flags it does not print: no traffic policy, affinity or source range', () => {
    const paste = readFileSync(
      new URL('../../fixtures/cilium/pastes/cilium-bpf-lb-list.txt', import.meta.url),
      'utf8',
    ).replace(/^```.*\n?/gm, '');
    const svc = aService('default/web', {
      clusterIP: '10.110.217.87',
      internalTrafficPolicy: 'Local',
      affinity: 10800,
    });
    const d = new Analysis(
      {
        objects: [
          svc,
          anEndpointSlice('default/web', ['10.10.1.129', '10.10.0.239']),
          aCiliumAgent('testnode', 'quay.io/cilium/cilium:v1.18.0'),
          aCiliumConfig({}),
        ],
        nodes: { testnode: { 'cilium-bpf-lb-list': paste } },
        meta: {},
      },
      { code: allModes },
    )
      .node('testnode')
      .drift();
    const flags = /cilium-(traffic-policy|affinity|source-range|forwarding)-/;
    assert.deepEqual(
      d.findings.filter((f) => flags.test(f.id)).map((f) => `${f.id} ${f.title}`),
      [],
    );
  });
});
