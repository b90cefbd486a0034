import assert from 'node:assert/strict';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { diagnose } from '../../../src/core/diagnose.js';
import type { KubeObject } from '../../../src/core/model.js';
import {
  aNode,
  aPod,
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

/** The cluster as a node still believes it is: web-2 was 10.244.1.9 before it was replaced. */
const staleObjects = () =>
  replace(
    healthy(),
    'EndpointSlice',
    'web-abcde',
    anEndpointSlice({
      endpoints: [
        { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
        { ip: '10.244.1.9', node: 'node-b', pod: 'web-2' },
      ],
    }),
  );
const withoutWeb = (dump: string) =>
  dump
    .split('\n')
    .filter((l) => !l.includes('default/web:http'))
    .join('\n');

describe('rules step', () => {
  const cases: {
    name: string;
    nodes: () => Record<string, Record<string, string>>;
    want: string[];
  }[] = [
    { name: 'both nodes as expected', nodes: () => dumps(healthy()), want: ['rules-match:pass'] },
    {
      name: 'one node still DNATs to a replaced Pod',
      nodes: () => ({
        'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a') },
        'node-b': { 'iptables-save': dumpFor(staleObjects(), 'node-b') },
      }),
      want: ['rules-match:pass', 'endpoint-stale:fail', 'endpoint-missing:warn'],
    },
    {
      name: 'one node without the Service rules',
      nodes: () => ({
        'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a') },
        'node-b': { 'iptables-save': withoutWeb(dumpFor(healthy(), 'node-b')) },
      }),
      want: ['rules-match:pass', 'service-rules-missing:fail'],
    },
    {
      name: 'a dump that cannot be parsed',
      nodes: () => ({ 'node-a': { 'iptables-save': '*nat\n-A KUBE-SERVICES -j\nCOMMIT\n' } }),
      want: ['rules-unreadable:skip', 'rules-not-observed:skip'], // node-b has no dump
    },
    {
      name: 'IPVS mode',
      nodes: () => ({
        'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a'), 'proxy-mode': 'ipvs\n' },
      }),
      // its virtual servers were not read: said as such, not compared as iptables rules
      want: ['rules-ipvs-not-observed:skip', 'rules-not-observed:skip'],
    },
    { name: 'nothing recorded', nodes: () => ({}), want: ['rules-not-recorded:skip'] },
  ];
  for (const c of cases)
    it(c.name, () => assert.deepEqual(ids(run(rulesCheck, facts(healthy(), c.nodes()))), c.want));

  it('names the node that differs from the others', () => {
    const found = run(
      rulesCheck,
      facts(healthy(), {
        'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a') },
        'node-b': { 'iptables-save': dumpFor(staleObjects(), 'node-b') },
      }),
    );
    const stale = found.find((f) => f.id === 'endpoint-stale')!;
    assert.match(stale.title, /^node-b: .* \(unlike node-a\)$/);
    assert.equal(stale.node, 'node-b');
    assert.ok(
      stale.evidence
        .map(evidenceText)
        .some((e) => e.startsWith('+ ') && e.includes('10.244.1.9:8080')),
      stale.evidence.map(evidenceText).join('\n'),
    );
    assert.equal(found[0]!.title, 'node-a: 80/TCP -> 2 endpoints, as expected');
  });

  it('nodes in the same condition are one finding, named a few and all in its nodes', () => {
    // six more nodes, each still DNATing to the replaced Pod as node-b does
    const more = ['c', 'd', 'e', 'f', 'g', 'h'].map((x, i) =>
      aNode(`node-${x}`, `192.0.2.${20 + i}`, `10.244.${2 + i}.0/24`),
    );
    const objects = [...healthy(), ...more];
    const stale = [...staleObjects(), ...more];
    const nodes: Record<string, Record<string, string>> = {
      'node-a': { 'iptables-save': dumpFor(objects, 'node-a') },
    };
    for (const n of ['b', 'c', 'd', 'e', 'f', 'g', 'h'])
      nodes[`node-${n}`] = { 'iptables-save': dumpFor(stale, `node-${n}`) };
    const found = run(rulesCheck, facts(objects, nodes));
    assert.deepEqual(ids(found), [
      'rules-match:pass',
      'endpoint-stale:fail',
      'endpoint-missing:warn',
    ]);
    const f = found[1]!;
    assert.match(f.title, /^7 nodes \(node-b, node-c, node-d and 4 more\): .* \(unlike node-a\)$/);
    assert.deepEqual(f.nodes, [
      'node-b',
      'node-c',
      'node-d',
      'node-e',
      'node-f',
      'node-g',
      'node-h',
    ]);
    assert.equal(f.node, undefined);
    assert.match(f.explanation, /^The same on 7 nodes\. On node-b: /);
    // node-b's own lines, then each other node said to hold the same
    assert.ok(f.evidence.map(evidenceText).includes('node-h: the same as node-b'));
    // a node that differs in another way stays its own finding
    nodes['node-h'] = { 'iptables-save': withoutWeb(dumpFor(objects, 'node-h')) };
    const apart = run(rulesCheck, facts(objects, nodes));
    assert.deepEqual(
      apart.filter((x) => x.status !== 'pass').map((x) => x.nodes?.length ?? x.node),
      [6, 6, 'node-h'],
    );
  });

  it('summarises agreeing nodes in one line, with each tree as evidence', () => {
    const [f] = run(rulesCheck, facts(healthy(), dumps(healthy())));
    assert.equal(f!.title, '2 nodes: 80/TCP -> 2 endpoints, as expected');
    assert.ok(
      f!.evidence
        .map(evidenceText)
        .includes('  50% -> KUBE-SEP-7U6MWNJWR3SADOJA: DNAT 10.244.0.5:8080'),
      f!.evidence.map(evidenceText).join('\n'),
    );
  });

  it('shows the REJECT rule of a Service without endpoints', () => {
    const objects: KubeObject[] = replace(
      healthy(),
      'EndpointSlice',
      'web-abcde',
      anEndpointSlice({ endpoints: [] }),
    );
    const [f] = run(rulesCheck, facts(objects, dumps(objects)));
    assert.equal(f!.title, '2 nodes: 80/TCP -> REJECT (no endpoints), as expected');
    assert.ok(f!.evidence.map(evidenceText).some((e) => e.includes('-j REJECT')));
  });

  it('internalTrafficPolicy Local: a node reaches its own endpoint through KUBE-SVL, the other drops', () => {
    const objects = replace(
      replace(healthy(), 'Service', 'web', aService({ spec: { internalTrafficPolicy: 'Local' } })),
      'EndpointSlice',
      'web-abcde',
      anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', node: 'node-a', pod: 'web-1' }] }),
    );
    const [f] = run(rulesCheck, facts(objects, dumps(objects)));
    // the nodes differ: node-a sends to 10.244.0.5, node-b has no local endpoint
    assert.equal(f!.title, '2 nodes: as expected');
    const evidence = f!.evidence.map(evidenceText);
    const b = evidence.indexOf('node-b:');
    assert.ok(
      evidence
        .slice(0, b)
        .some((e) => /^ {2}100% -> KUBE-SEP-\w+: DNAT 10\.244\.0\.5:8080$/.test(e)),
      evidence.join('\n'),
    );
    assert.ok(
      evidence.slice(b).some((e) => e.includes('has no local endpoints') && e.endsWith('-j DROP')),
    );
  });

  it('is pending while the node rules are read, skipped for a Cilium cluster', () => {
    assert.deepEqual(ids(run(rulesCheck, facts(healthy()), { collecting: { nodes: true } })), [
      'pending:pending',
    ]);
    const cilium = [
      ...healthy().filter((o) => !o.metadata?.name?.startsWith('kube-proxy')),
      aPod({
        name: 'cilium-x',
        namespace: 'kube-system',
        labels: { 'k8s-app': 'cilium' },
        owner: { kind: 'DaemonSet', name: 'cilium' },
      }),
    ];
    // node-b has no Cilium agent Pod (cilium-x runs on node-a): its table is said not read
    // (the kube-proxy step's cilium-agent-missing says why), not skipped as no kube-proxy's
    assert.deepEqual(ids(run(rulesCheck, facts(cilium))), [
      'rules-cilium-not-observed:skip',
      'rules-not-observed:skip',
    ]);
  });
});

describe('rules step, a dual-stack Service on a node that recorded only its ip6tables-save', () => {
  it('says its IPv4 half not observed there (in unobserved), and matches "1 of 2 nodes" in IPv4', async () => {
    const read = await readSnapshot('snapshots/dual-stack-ipv6-rules-missing');
    const { 'iptables-save': _gone, ...kept } = read.nodes['vm-12-7-centos']!;
    const f = { ...read, nodes: { ...read.nodes, 'vm-12-7-centos': kept } };
    const r = diagnose(f, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const found = r.steps.find((s) => s.id === 'rules')!.findings;
    const unseen = found.find((x) => x.id === 'rules-not-observed');
    assert.equal(unseen?.title, 'IPv4: vm-12-7-centos: rules not observed');
    assert.equal(unseen?.node, 'vm-12-7-centos');
    assert.ok(
      (r.unobserved ?? []).some((u) => u.includes('IPv4: vm-12-7-centos: rules not observed')),
    );
    // nothing passes for it in IPv4
    assert.ok(
      !found.some(
        (x) =>
          x.status === 'pass' &&
          x.title.startsWith('IPv4') &&
          x.evidence.some((e) => e.node === 'vm-12-7-centos'),
      ),
    );
  });
});

describe('rules step, a recorded dump whose rule holds control bytes', () => {
  // iptables-save prints none: a colour code, a BEL and a CR around a DNAT target were put there
  it('does not read that rule (said at its line) and fails nothing from it', async () => {
    const read = await readSnapshot('snapshots/nginx-svc');
    const node = read.nodes['vm-12-7-centos']!;
    const dump = node['iptables-save']!.replace(
      '--to-destination 10.244.1.7:80\n',
      '--to-destination \x1b[31m10.244.1.7:80\x1b[0m\x07\r\n',
    );
    assert.notEqual(dump, node['iptables-save']);
    const f = {
      ...read,
      nodes: { ...read.nodes, 'vm-12-7-centos': { ...node, 'iptables-save': dump } },
    };
    const r = diagnose(f, { namespace: 'default', service: 'nginx-svc' }, { code: allModes });
    const found = r.steps.find((s) => s.id === 'rules')!.findings;
    assert.deepEqual(
      found.filter((x) => x.status === 'fail' || x.status === 'warn').map((x) => x.title),
      [],
    );
    const unseen = found.find((x) => x.id === 'rules-not-observed' && x.node === 'vm-12-7-centos');
    assert.ok(
      unseen?.evidence.some((e) =>
        /iptables-save\.txt:68: a rule of KUBE-SEP-FNO4E6JYD7EGUHTP not read: it holds a control byte \(\\x1b\)/.test(
          e.text,
        ),
      ),
      unseen?.evidence.map(evidenceText).join('\n'),
    );
  });
});

describe('rules step, a kube-proxy release read that its rules contradict', () => {
  // nginx-svc's rules are v1.15's; its kube-proxy Pods' image says v1.28.4
  it('says the disagreement once, with both sources; where the rules route is still compared', async () => {
    const read = await readSnapshot('snapshots/nginx-svc');
    const objects = JSON.parse(
      JSON.stringify(read.objects).replaceAll('kube-proxy:v1.15.2', 'kube-proxy:v1.28.4'),
    );
    const r = diagnose(
      { ...read, objects },
      { namespace: 'default', service: 'nginx-svc' },
      { code: allModes },
    );
    const found = r.steps.find((s) => s.id === 'rules')!.findings;
    assert.deepEqual(ids(found), ['rules-match:pass', 'rules-release-disagrees:warn']);
    const said = found[1]!.evidence.map(evidenceText).join('\n');
    assert.match(found[1]!.title, /kube-proxy v1\.28\.4 read, rules spelled as v1\.19 or earlier/);
    assert.match(said, /from the image \S+kube-proxy:v1\.28\.4/);
    assert.match(said, /a one-rule KUBE-POSTROUTING \(v1\.19 or earlier\)/);
  });
});

describe('rules step, a chain an upgrade leaves behind', () => {
  // the kubelet made KUBE-MARK-DROP up to 1.27 and nothing deletes it: a node upgraded since keeps
  // it beside kube-proxy v1.30's own rules, which are that release's
  it("the kubelet's KUBE-MARK-DROP dates nothing: kube-proxy v1.30's rules agree with v1.30", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kdebug-mark-drop-'));
    try {
      cpSync('test/fixtures/releases/30/iptables', dir, { recursive: true });
      for (const node of ['node-a', 'node-b']) {
        const file = join(dir, 'nodes', node, 'iptables-save.txt');
        const save = readFileSync(file, 'utf8').replace(
          /\*nat\n([\s\S]*?)COMMIT\n/,
          '*nat\n:KUBE-MARK-DROP - [0:0]\n$1-A KUBE-MARK-DROP -j MARK --set-xmark 0x8000/0x8000\nCOMMIT\n',
        );
        assert.match(save, /:KUBE-MARK-DROP/);
        writeFileSync(file, save);
      }
      const r = diagnose(
        await readSnapshot(dir),
        { namespace: 'matrix', service: 'cluster-ip' },
        { code: allModes },
      );
      const found = r.steps.find((s) => s.id === 'rules')!.findings;
      assert.deepEqual(ids(found), ['rules-match:pass']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
