// The expected rules against the real iptables, in a private network namespace: they load with
// iptables-restore and iptables-save prints them back unchanged (so they are in canonical form);
// kube-proxy's own TestOverallIPTablesRules payload canonicalises to the same rules for the same
// objects; and the saved rules read back (parse -> Service trees -> drift) into the same Service
// ports, endpoints and shares, with no drift. Nothing touches the host's own rules.
//
// IP conventions (kube-proxy's proxier_test.go): Pod IPs 10.180.0.0/16 in the cluster CIDR
// 10.0.0.0/8, ClusterIPs 172.30.0.0/16, node test-node 192.168.0.2, other node 192.168.0.3,
// external IPs 192.168.99.0/24, load balancers 1.2.3.4 / 5.6.7.8, source range 203.0.113.0/25.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { expectedRules, expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';
import { aService, anEndpointSlice } from '../support/builders.js';
import { common, NODE, overall } from '../support/ipt-overall.js';
import { realIptablesMissing } from '../support/real-iptables.js';
import { skipWithout } from '../support/skip.js';

const ns = `kd-expect-${process.pid}`;
const missing = realIptablesMissing();

/** Every other shape: many endpoints, local policies, udp/sctp, terminating-only, no endpoints. */
const shapes: KubeObject[] = [
  aService('ns7/many', { clusterIP: '172.30.0.47' }),
  anEndpointSlice('ns7/many', [
    '10.180.0.7',
    '10.180.0.17',
    '10.180.1.27',
    '10.180.1.37',
    '10.180.0.47',
  ]),
  aService('ns8/local', {
    type: 'NodePort',
    clusterIP: '172.30.0.48',
    externalTrafficPolicy: 'Local',
    ports: [['p80', 80, 'TCP', 3008]],
  }),
  anEndpointSlice('ns8/local', [
    ['10.180.0.8', { node: NODE }],
    ['10.180.1.8', { node: 'other-node' }],
  ]),
  aService('ns9/itp', { clusterIP: '172.30.0.49', internalTrafficPolicy: 'Local' }),
  anEndpointSlice('ns9/itp', [
    ['10.180.0.9', { node: NODE }],
    ['10.180.1.9', { node: 'other-node' }],
  ]),
  aService('ns10/dns', {
    clusterIP: '172.30.0.50',
    ports: [
      ['dns', 53, 'UDP'],
      ['dns-tcp', 53, 'TCP'],
      ['diameter', 3868, 'SCTP'],
    ],
  }),
  anEndpointSlice(
    'ns10/dns',
    ['10.180.0.10', '10.180.1.10'],
    [
      ['dns', 53, 'UDP'],
      ['dns-tcp', 53, 'TCP'],
      ['diameter', 3868, 'SCTP'],
    ],
  ),
  aService('ns11/draining', { clusterIP: '172.30.0.51' }),
  anEndpointSlice('ns11/draining', [
    ['10.180.0.11', { ready: false, serving: true, terminating: true }],
  ]),
  aService('ns12/lb-local', {
    type: 'LoadBalancer',
    clusterIP: '172.30.0.52',
    externalTrafficPolicy: 'Local',
    ports: [['p80', 80, 'TCP', 3012]],
    loadBalancerIPs: ['9.10.11.12'],
    sourceRanges: ['203.0.113.0/25', '192.168.0.0/24'],
    healthCheckNodePort: 30012,
  }),
  anEndpointSlice('ns12/lb-local', [['10.180.0.12', { node: NODE }]]),
];

// every iptables command runs inside the test's own namespace
const inNs = (cmd: string, args: string[], input?: string) =>
  execFileSync('ip', ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8', input });

const rules = (saved: string) =>
  saved
    .split('\n')
    .filter((l) => l.startsWith('-A ') || l.startsWith(':'))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ''));

describe(
  'expected rules against the real iptables',
  skipWithout(missing && `${missing} (needs root, iproute2 and iptables)`),
  () => {
    before(() => {
      execFileSync('ip', ['netns', 'add', ns]);
    });
    after(() => {
      spawnSync('ip', ['netns', 'del', ns]);
    });
    const flush = () => inNs('iptables-restore', [], '*filter\nCOMMIT\n*nat\nCOMMIT\n');

    it('kube-proxy TestOverallIPTablesRules: its payload, canonicalised by iptables, is our expected rules', () => {
      flush();
      inNs(
        'iptables-restore',
        [],
        readFileSync(
          new URL('../fixtures/kube-proxy-overall-payload.txt', import.meta.url),
          'utf8',
        ),
      );
      const theirs = rules(inNs('iptables-save', []));
      const ours = rules(
        expectedSave(
          // the payload predates 1.37, which writes --random-fully whatever iptables has
          expectedRules(clusterView([...common, ...overall]), NODE, {
            randomFully: false,
            release: { minor: 36 },
          }),
          { header: false },
        ),
      );
      // the payload has neither kube-proxy's built-in chain jumps (EnsureRule) nor its canary
      const own = (l: string) =>
        !/^(-A |:)(INPUT|FORWARD|OUTPUT|PREROUTING|POSTROUTING)\b/.test(l) &&
        !l.startsWith(':KUBE-PROXY-CANARY');
      assert.deepEqual(ours.filter(own).sort(), theirs.filter(own).sort());
    });

    it('loads every shape and iptables-save prints each line back unchanged', () => {
      flush();
      const exp = expectedRules(clusterView([...common, ...overall, ...shapes]), NODE, {
        randomFully: true,
      });
      const text = expectedSave(exp, { header: false });
      inNs('iptables-restore', [], text);
      assert.deepEqual(rules(inNs('iptables-save', [])).sort(), rules(text).sort());
    });

    it('reads back into the same Service ports, endpoints and shares, with no drift', () => {
      flush();
      const view = clusterView([...common, ...overall, ...shapes]);
      const exp = expectedRules(view, NODE, { randomFully: true });
      inNs('iptables-restore', [], expectedSave(exp, { header: false }));
      const saved = inNs('iptables-save', []);
      const rs = parseIptables(saved, { file: 'iptables-save' });
      const trees = buildServiceTrees(rs);
      for (const sp of exp.servicePorts) {
        const t = trees.services.find((x) => x.hash === sp.hash);
        if (!sp.hasInternalEndpoints && !sp.hasExternalEndpoints && !sp.hasEndpoints) {
          assert.ok(
            t?.verdicts.some((v) => v.kind === 'reject'),
            `${sp.name}: REJECT read back`,
          );
          continue;
        }
        assert.ok(t, `${sp.name}: a tree`);
        assert.equal(t.name, sp.name);
        if (sp.hasInternalEndpoints)
          assert.deepEqual([t.clusterIP, t.port], [sp.clusterIP, sp.port], sp.name);
        assert.deepEqual(
          [...t.nodePorts].sort(),
          sp.hasEndpoints && sp.nodePort ? [sp.nodePort] : [],
          sp.name,
        );
        assert.deepEqual(t.externalIPs, sp.hasEndpoints ? sp.externalIPs : [], sp.name);
        assert.deepEqual(t.loadBalancerIPs, sp.hasEndpoints ? sp.loadBalancerIPs : [], sp.name);
        const shares = (eps: { address?: string; probability: number }[]) =>
          eps.map((e) => [e.address, Math.round(e.probability * 1e6) / 1e6]);
        const even = (eps: { address: string }[]) =>
          eps.map((e) => [e.address, Math.round(1e6 / eps.length) / 1e6]);
        assert.deepEqual(
          shares(t.endpoints),
          even(sp.chains.svc ? sp.clusterEndpoints : []),
          `${sp.name} cluster endpoints`,
        );
        if (sp.chains.svl)
          assert.deepEqual(
            shares(t.localEndpoints ?? []),
            even(sp.localEndpoints),
            `${sp.name} local endpoints`,
          );
        assert.equal(t.affinitySeconds, sp.affinitySeconds, sp.name);
      }
      assert.deepEqual(trees.orphans, []);
      const drift = nodeDrift({
        node: NODE,
        source: 'saved',
        expected: expectedRules(view, NODE, optionsFromDump(rs)),
        actual: rs,
        view,
      });
      assert.deepEqual(drift.findings, []);
    });
  },
);
