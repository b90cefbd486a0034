import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diagnose, probePlan, STEPS } from '../../src/core/diagnose.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { aService, dumps, facts, healthy, listedWhole, TARGET } from './checks/builders.js';
import { allModes } from '../support/modes.js';

const statuses = (f: Facts, o: Partial<Parameters<typeof diagnose>[2]> = {}) =>
  Object.fromEntries(
    diagnose(f, TARGET, { code: allModes, ...o }).steps.map((s) => [s.id, s.status]),
  );

describe('diagnose', () => {
  it('runs the ten steps in order', () => {
    assert.deepEqual(
      diagnose(facts(healthy()), TARGET, { code: allModes }).steps.map((s) => s.id),
      [
        'service',
        'ports',
        'selector',
        'endpoints',
        'dns',
        'kube-proxy',
        'rules',
        'reachability',
        'traffic-policy',
        'hairpin',
      ],
    );
    assert.equal(STEPS.length, 10);
  });

  it('with no facts yet (live, just started): every step pending', () => {
    const all = statuses(
      { objects: [], nodes: {}, meta: {} },
      { collecting: { objects: true, nodes: true } },
    );
    assert.deepEqual(new Set(Object.values(all)), new Set(['pending']));
  });

  it('objects read, node commands still running: the node steps are pending', () => {
    const s = statuses(facts(healthy()), { collecting: { nodes: true } });
    assert.deepEqual(
      { rules: s['rules'], reachability: s['reachability'], hairpin: s['hairpin'], dns: s['dns'] },
      { rules: 'pending', reachability: 'pending', hairpin: 'pending', dns: 'pending' },
    );
    assert.equal(s['endpoints'], 'pass');
    assert.equal(
      diagnose(facts(healthy()), TARGET, { code: allModes, collecting: { nodes: true } }).status,
      'pending',
    );
  });

  it('the same facts once collection is over: skipped, not pending', () => {
    const s = statuses(facts(healthy()));
    assert.equal(s['rules'], 'skip');
    assert.equal(s['reachability'], 'skip');
  });

  it('a healthy cluster with its rules: nothing fails or warns', () => {
    const report = diagnose(facts(healthy(), dumps(healthy())), TARGET, { code: allModes });
    assert.deepEqual(
      report.steps.filter((s) => s.status === 'fail' || s.status === 'warn').map((s) => s.id),
      [],
    );
    assert.equal(report.status, 'pass');
    assert.deepEqual(report.service, {
      type: 'ClusterIP',
      clusterIP: '10.96.0.50',
      ports: ['http 80/TCP -> 8080'],
      proxyMode: 'iptables',
    });
  });

  it('a missing Service fails step 1 and skips the rest', () => {
    const report = diagnose(listedWhole(facts([aService({ name: 'other' })])), TARGET, {
      code: allModes,
    });
    assert.equal(report.steps[0]!.status, 'fail');
    assert.deepEqual(new Set(report.steps.slice(1).map((s) => s.status)), new Set(['skip']));
    assert.equal(report.status, 'fail');
  });

  it('never throws on malformed objects', () => {
    const junk: KubeObject[] = [
      {
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: { ports: 'nope', selector: 7 },
      },
      {
        kind: 'EndpointSlice',
        metadata: {
          name: 'x',
          namespace: 'default',
          labels: { 'kubernetes.io/service-name': 'web' },
        },
        endpoints: [{}, null, { addresses: 'x' }],
      },
      {
        kind: 'Pod',
        metadata: { name: 'p', namespace: 'default' },
        spec: null,
        status: { containerStatuses: [null] },
      },
      {
        kind: 'ConfigMap',
        metadata: { name: 'kube-proxy', namespace: 'kube-system' },
        data: { 'config.conf': ': : not yaml [' },
      },
      { kind: 'Node' },
    ];
    const report = diagnose(
      facts(junk, {
        'node-a': { 'iptables-save': 'garbage\n', 'proxy-mode': '\u0000', 'tcp-connect_x_1': '' },
      }),
      TARGET,
      { code: allModes },
    );
    assert.equal(report.steps.length, 10);
    assert.ok(
      !report.steps.some((s) => s.findings.some((f) => f.id === 'check-crashed')),
      JSON.stringify(report.steps.map((s) => s.findings.map((f) => f.title))),
    );
  });

  it('plans the probes the steps read', () => {
    assert.deepEqual(probePlan(facts(healthy()), TARGET, { code: allModes }), [
      {
        kind: 'dns-lookup',
        name: 'web.default.svc.cluster.local',
        server: '10.96.0.10',
        type: 'A',
      },
      { kind: 'tcp-connect', ip: '10.96.0.50', port: 80 },
      { kind: 'tcp-connect', ip: '10.244.0.5', port: 8080 },
      { kind: 'tcp-connect', ip: '10.244.1.6', port: 8080 },
      { kind: 'icmp-echo', ip: '10.96.0.50' },
    ]);
    assert.deepEqual(probePlan(facts([]), TARGET, { code: allModes }), []);
  });
});
