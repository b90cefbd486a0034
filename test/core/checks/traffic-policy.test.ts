import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import { describe, it } from 'node:test';
import { trafficPolicyCheck } from '../../../src/core/checks/traffic-policy/traffic-policy.js';
import type { KubeObject } from '../../../src/core/model.js';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { diagnose } from '../../../src/core/diagnose.js';
import {
  aService,
  anEndpointSlice,
  dumpFor,
  dumps,
  facts,
  healthy,
  ids,
  replace,
  run,
} from './builders.js';
import { allModes } from '../../support/modes.js';
import { expectedRules } from '../../../src/core/dataplane/kube-proxy/expected.js';
import { expectedNftScript } from '../../../src/core/dataplane/nftables/expected/expected.js';
import {
  expectedIpvs,
  ipsetSaveLines,
  ipvsadmSaveLines,
  ipvsIptablesSave,
} from '../../../src/core/dataplane/ipvs/expected/expected.js';
import { clusterView, serviceCIDRs } from '../../../src/core/kube/objects.js';

const nodePortLocal = (type = 'NodePort') =>
  aService({
    spec: {
      type,
      externalTrafficPolicy: 'Local',
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }],
      ...(type === 'LoadBalancer' ? { healthCheckNodePort: 31999 } : {}),
    },
  });
const onlyNodeA = () =>
  anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', node: 'node-a', pod: 'web-1' }] });
const cluster = (svc: KubeObject, slice = onlyNodeA()) =>
  replace(replace(healthy(), 'Service', 'web', svc), 'EndpointSlice', 'web-abcde', slice);

describe('traffic policy step', () => {
  // `unread`: no node's rules in the facts; the others read both nodes' dumps
  const cases: { name: string; objects: KubeObject[]; want: string[]; unread?: true }[] = [
    { name: 'Cluster policies', objects: healthy(), want: ['traffic-policy-cluster:pass'] },
    {
      name: 'NodePort, ETP Local, a node without a local endpoint',
      objects: cluster(nodePortLocal()),
      want: ['no-local-endpoint:fail'],
    },
    {
      name: 'LoadBalancer, ETP Local: the health check steers away',
      objects: cluster(nodePortLocal('LoadBalancer')),
      want: ['no-local-endpoint:warn'],
    },
    {
      name: 'ETP Local with an endpoint on every node',
      objects: cluster(nodePortLocal(), anEndpointSlice()),
      want: ['local-endpoints-everywhere:pass'],
    },
    {
      name: 'ETP Local on a ClusterIP Service without external IPs does nothing',
      objects: cluster(aService({ spec: { externalTrafficPolicy: 'Local' } })),
      want: ['traffic-policy-cluster:pass'],
    },
    {
      name: 'ITP Local, a node without a local endpoint',
      objects: cluster(aService({ spec: { internalTrafficPolicy: 'Local' } })),
      want: ['no-local-endpoint:warn'],
    },
    {
      name: 'ETP Local, the node without a local endpoint not read: not observed, never a drop',
      objects: cluster(nodePortLocal()),
      unread: true,
      want: ['traffic-policy-not-observed:skip'],
    },
    {
      name: 'Cluster policies, no node read: what kube-proxy would do, never a ✓',
      objects: healthy(),
      unread: true,
      want: ['traffic-policy-not-observed:skip'],
    },
    {
      name: 'Cluster policies, no ready endpoint: the rules only reject, nothing forwards, no ✓',
      objects: replace(healthy(), 'EndpointSlice', 'web-abcde', anEndpointSlice({ endpoints: [] })),
      want: ['traffic-policy-not-checked:skip'],
    },
    {
      name: 'Cluster policies, every endpoint not ready: the same',
      objects: replace(
        healthy(),
        'EndpointSlice',
        'web-abcde',
        anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', node: 'node-a', ready: false }] }),
      ),
      want: ['traffic-policy-not-checked:skip'],
    },
    {
      name: 'ITP Local, the node without a local endpoint not read',
      objects: cluster(aService({ spec: { internalTrafficPolicy: 'Local' } })),
      unread: true,
      want: ['traffic-policy-not-observed:skip'],
    },
  ];
  for (const c of cases)
    it(c.name, () =>
      assert.deepEqual(
        ids(run(trafficPolicyCheck, facts(c.objects, c.unread ? {} : dumps(c.objects)))),
        c.want,
      ),
    );

  it('says what a node whose rules were not read would do, as not observed', () => {
    const objects = cluster(nodePortLocal());
    const [f] = run(
      trafficPolicyCheck,
      facts(objects, { 'node-a': { 'iptables-save': dumpFor(objects, 'node-a') } }),
    );
    assert.equal(
      f!.title,
      'externalTrafficPolicy Local: node-b has no local endpoint; what it does is not observed (rules not compared)',
    );
    assert.match(f!.explanation, /kube-proxy there would drop new connections to node port 30080/);
    assert.equal(f!.node, 'node-b');
    assert.ok(
      f!.evidence
        .map(evidenceText)
        .includes('not observed: node-b: rules of its iptables mode not compared'),
      f!.evidence.map(evidenceText).join('\n'),
    );
  });

  it('names the node that drops, with its DROP rule', () => {
    const objects = cluster(nodePortLocal());
    const [f] = run(
      trafficPolicyCheck,
      facts(objects, { 'node-b': { 'iptables-save': dumpFor(objects, 'node-b') } }),
    );
    assert.equal(
      f!.title,
      'externalTrafficPolicy Local: node-b has no local endpoint and drops node port 30080',
    );
    assert.equal(f!.node, 'node-b');
    assert.ok(f!.evidence.map(evidenceText).includes('node-a: local endpoint 10.244.0.5:8080'));
    assert.ok(
      f!.evidence
        .map(evidenceText)
        .some((e) => e.includes('has no local endpoints') && e.includes('-j DROP')),
      f!.evidence.map(evidenceText).join('\n'),
    );
  });
});

describe('policy Local on an IPv6 Service', () => {
  it("a node's local endpoints are its IPv6 ones, as the IPv6 proxier uses them", () => {
    const slice = anEndpointSlice({
      endpoints: [
        { ip: 'fd00:10:244::5', node: 'node-a', pod: 'web-1' },
        { ip: 'fd00:10:244:1::6', node: 'node-b', pod: 'web-2' },
      ],
    });
    const svc = nodePortLocal();
    Object.assign(slice, { addressType: 'IPv6' });
    Object.assign(svc.spec as object, { clusterIP: 'fd00:10:96::20', ipFamilies: ['IPv6'] });
    const found = run(trafficPolicyCheck, facts(cluster(svc, slice)));
    assert.deepEqual(ids(found), ['local-endpoints-everywhere:pass']);
    assert.deepEqual(found[0]!.evidence.map(evidenceText), [
      'node-a: local endpoint [fd00:10:244::5]:8080',
      'node-b: local endpoint [fd00:10:244:1::6]:8080',
    ]);
  });
});

describe("policy Cluster rests on the nodes' rules", () => {
  it('a node the Rules step found without the rule is not passed: not met there, pointing at step 7', async () => {
    const facts = await readSnapshot('snapshots/missing-service-rules');
    const r = diagnose(facts, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const found = r.steps.find((s) => s.id === 'traffic-policy')!.findings;
    assert.deepEqual(ids(found), ['traffic-policy-cluster:pass', 'traffic-policy-not-met:warn']);
    const [pass, notMet] = found as [(typeof found)[0], (typeof found)[0]];
    assert.deepEqual(pass.nodes, ['vm-12-7-centos']);
    assert.ok(
      pass.evidence.some((e) => e.kind === 'observed' && e.node === 'vm-12-7-centos'),
      pass.evidence.map(evidenceText).join('\n'),
    );
    assert.equal(notMet.node, 'vm-12-11-centos');
    assert.match(notMet.explanation, /This follows from service-rules-missing \(Rules\)/);
    assert.equal(r.firstProblem?.finding.id, 'service-rules-missing', 'the root stays in Rules');
  });
});

/** A scratch copy of snapshots/`name`, `edit`ed. */
function copyOf(name: string, edit: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-tp-'));
  cpSync(`snapshots/${name}`, dir, { recursive: true });
  edit(dir);
  return dir;
}
const policyOf = async (dir: string) => {
  const r = diagnose(
    await readSnapshot(dir),
    { namespace: 'default', service: 'nginx-svc' },
    { code: allModes },
  );
  rmSync(dir, { recursive: true, force: true });
  return r.steps.find((s) => s.id === 'traffic-policy')!.findings;
};

describe('policy Cluster with no ready endpoint', () => {
  for (const demo of ['pods-not-ready', 'selector-typo'])
    it(`${demo}: the REJECT kube-proxy writes is no forwarding: no ✓, the REJECT said as what the nodes do`, async () => {
      const found = await policyOf(copyOf(demo, () => {}));
      assert.deepEqual(ids(found), ['traffic-policy-not-checked:skip']);
      const [f] = found;
      assert.match(f!.title, /no ready endpoint/);
      assert.ok(
        f!.evidence.some((e) => e.kind === 'observed' && /-j REJECT/.test(e.text)),
        f!.evidence.map(evidenceText).join('\n'),
      );
    });
});

describe('policy Cluster with no ready endpoint, in every kube-proxy mode', () => {
  const objects = replace(
    healthy(),
    'EndpointSlice',
    'web-abcde',
    anEndpointSlice({ endpoints: [] }),
  );
  const view = clusterView(objects);
  // what kube-proxy writes on each node in that mode, as the node lists it
  const modes: [string, RegExp, (n: string) => Record<string, string>][] = [
    [
      'nftables',
      /no-endpoint-services .* : reject$/,
      (n) => ({
        'proxy-mode': 'nftables',
        'nft-ip-kube-proxy': expectedNftScript(expectedRules(view, n), serviceCIDRs(view)).join(
          '\n',
        ),
      }),
    ],
    [
      'ipvs',
      /virtual server/,
      (n) => {
        const e = expectedIpvs(expectedRules(view, n));
        return {
          'proxy-mode': 'ipvs',
          'ipvsadm-save': `${ipvsadmSaveLines(e).join('\n')}\n`,
          'ipset-save': `${ipsetSaveLines(e).join('\n')}\n`,
          'iptables-save': `${ipvsIptablesSave(e).join('\n')}\n`,
          'ip-addr': `eth0 UP ${view.nodes.find((x) => x.name === n)!.ips[0]}/24\nkube-ipvs0 DOWN ${e.bound.map((ip) => `${ip}/32`).join(' ')}\n`,
        };
      },
    ],
  ];
  for (const [mode, cited, node] of modes)
    it(`${mode}: the node's no-endpoint reject is cited as what the nodes do`, () => {
      const nodes = { 'node-a': node('node-a'), 'node-b': node('node-b') };
      const found = run(trafficPolicyCheck, facts(objects, nodes));
      assert.deepEqual(ids(found), ['traffic-policy-not-checked:skip']);
      const seen = found[0]!.evidence.filter((e) => e.kind === 'observed');
      for (const n of ['node-a', 'node-b'])
        assert.ok(
          seen.some((e) => e.node === n && cited.test(e.text)),
          found[0]!.evidence.map(evidenceText).join('\n'),
        );
    });
});

describe('policy Cluster on nodes the Rules step did not compare or found not forwarding', () => {
  it('a dump cut short (rules not compared) is not observed, not passed', async () => {
    const dir = copyOf('nginx-svc', (d) => {
      const f = join(d, 'nodes/vm-12-7-centos/iptables-save.txt');
      const lines = readFileSync(f, 'utf8').split('\n');
      writeFileSync(f, [...lines.slice(0, 87), lines[87]!.slice(0, 20)].join('\n'));
    });
    const found = await policyOf(dir);
    assert.deepEqual(ids(found), [
      'traffic-policy-cluster:pass',
      'traffic-policy-not-observed:skip',
    ]);
    assert.deepEqual(found[0]!.nodes, ['vm-12-11-centos']);
    assert.equal(found[1]!.node, 'vm-12-7-centos');
  });

  it('a Cilium node whose BPF maps lack the Service (cilium-bpf-map-differs) is not met', async () => {
    const dir = copyOf('cilium-stale-backend', (d) => {
      const f = join(d, 'nodes/vm-12-7-centos/cilium-bpf-lb-list.txt');
      const kept = readFileSync(f, 'utf8')
        .split('\n')
        .filter((l) => !l.includes('10.1.190.219'));
      writeFileSync(f, kept.join('\n'));
    });
    const found = await policyOf(dir);
    assert.ok(!found.some((f) => f.status === 'pass'), ids(found).join(', '));
    const notMet = found.find(
      (f) => f.id === 'traffic-policy-not-met' && f.node === 'vm-12-7-centos',
    );
    assert.match(notMet?.explanation ?? '', /cilium-bpf-map-differs/);
  });
});
