// IP conventions: the demo snapshot (the demo cluster): Pod CIDR 10.244.0.0/16, Service CIDR
// 10.1.0.0/16, nodes vm-12-7-centos (10.0.12.7) and vm-12-11-centos (10.0.12.11).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { analyze, searchNodes } from '../../src/tui/data.js';
import {
  listingRawLines,
  nftRawLines,
  treeRows,
  type TreeRow,
} from '../../src/tui/screens/rules-rows.js';
import { traceDestinations, traceSources, walk } from '../../src/tui/screens/trace-model.js';
import { clusterIpObjects, NODE_A_TABLE } from '../support/nft-lab.js';
import { readNftPaste } from '../../src/core/dataplane/paste/paste.js';
import { allModes } from '../support/modes.js';
import type { DriftFinding } from '../../src/core/dataplane/drift.js';

/** What each finding says of `line` wherever it shows it (expected or actual): on the node. */
const onNode = (findings: DriftFinding[], line: string) =>
  findings.flatMap((f) => [
    ...f.drift.expected.flatMap((l, i) => (l === line ? [f.drift.onNode?.expected[i]] : [])),
    ...f.drift.actual.flatMap((l, i) => (l === line ? [f.drift.onNode?.actual[i]] : [])),
  ]);

const facts = await readSnapshot(new URL('../../snapshots/nginx-svc', import.meta.url).pathname);
const target = { namespace: 'default', service: 'nginx-svc' };

describe('what the screens get from the core', () => {
  const data = analyze({ facts, code: allModes }, { target });

  it('every recorded node with its rules and trees, the Report and the Service', () => {
    assert.deepEqual(
      data.nodes.map((n) => [n.name, n.source, n.trees?.services.length]),
      [
        ['vm-12-11-centos', 'nodes/vm-12-11-centos/iptables-save.txt', 5],
        ['vm-12-7-centos', 'nodes/vm-12-7-centos/iptables-save.txt', 5],
      ],
    );
    assert.equal(data.report?.target.service, 'nginx-svc');
    assert.equal(data.service?.clusterIP, '10.1.190.219');
  });

  it("NAME:PORT: the header's Service has the port diagnosed, as the report", () => {
    const dns = analyze(
      { facts, code: allModes },
      {
        target: { namespace: 'kube-system', service: 'kube-dns', port: 'dns-tcp' },
      },
    );
    assert.deepEqual(
      dns.service?.ports.map((p) => `${p.port}/${p.protocol}`),
      ['53/TCP'],
    );
    assert.deepEqual(dns.report?.service?.ports, ['dns-tcp 53/TCP -> 53']);
  });

  it('searches every node, the one shown first, each chain once', () => {
    const hits = searchNodes(data.nodes, 'KUBE-SVC-ELCM5PCEQWBTUJ2I', 1);
    const chains = hits.filter((h) => h.kind === 'chain' && h.text === 'KUBE-SVC-ELCM5PCEQWBTUJ2I');
    assert.deepEqual(
      chains.map((h) => h.node),
      [1],
    );
    assert.equal(searchNodes(data.nodes, 'KUBE-SVC-ELCM5PCEQWBTUJ2I', 0)[0]?.node, 0);
  });

  it('pending steps while the facts are still being read', () => {
    const empty: Facts = { objects: [], nodes: {}, meta: {} };
    const collecting = analyze(
      { facts: empty, code: allModes },
      { target, collecting: { objects: true, nodes: true } },
    );
    assert.ok(collecting.report!.steps.every((s) => s.status === 'pending'));
  });

  it('keeps a dump that does not parse as an error on its node', () => {
    const broken = structuredClone(facts);
    broken.nodes['vm-12-7-centos']!['iptables-save'] = '*nat\n-A KUBE-SERVICES --bogus\nCOMMIT\n';
    const node = analyze({ facts: broken, code: allModes }).nodes.find(
      (n) => n.name === 'vm-12-7-centos',
    )!;
    assert.equal(node.trees, undefined);
    assert.match(node.error!, /^nodes\/vm-12-7-centos\/iptables-save\.txt:2: /);
    assert.deepEqual(node.drift(), { error: node.error });
  });

  it('says why there is no drift for rules without the cluster objects', () => {
    const text = facts.nodes['vm-12-7-centos']!['iptables-save']!;
    const onlyRules = analyze(
      { facts: { objects: [], nodes: {}, meta: {} }, code: allModes },
      { rules: { label: 'dump.txt', text } },
    );
    assert.match(
      (onlyRules.nodes[0]!.drift() as { error: string }).error,
      /Services and their endpoints/,
    );
  });
});

describe('what the screens get from a dual-stack nft listing given to rules --file', () => {
  const both = ['v4', 'v6']
    .map((f) => readFileSync(`test/fixtures/releases/37/nftables-overall-${f}.nft`, 'utf8'))
    .join('');
  const nft = readNftPaste(both, 'ruleset.nft');
  assert.ok(!('notKubeProxy' in nft));
  const nodes = analyze(
    { facts: { objects: [], nodes: {}, meta: {} }, code: allModes },
    { rules: { label: 'ruleset.nft', text: both, nft: nft.table } },
  ).nodes;

  it('each table is a node of its family, with its own trees and search', () => {
    assert.deepEqual(
      nodes.map((n) => [n.label, n.family, n.nft?.family]),
      [
        ['ruleset.nft', 'IPv4', 'ip'],
        ['ruleset.nft IPv6', 'IPv6', 'ip6'],
      ],
    );
    assert.ok(nodes[0]!.trees!.services.every((t) => !t.clusterIP?.includes(':')));
    assert.ok(nodes[1]!.trees!.services.length > 0);
    assert.ok(nodes[1]!.trees!.services.every((t) => t.clusterIP?.includes(':')));
    assert.ok(nodes[1]!.search()!.search('fd00:172:30::41').length > 0);
    // the ip table's node finds its own Services by address
    assert.ok(
      nodes[0]!
        .search()!
        .search('172.30.0.41')
        .some((h) => h.kind === 'service'),
    );
  });
});

describe('what the screens get from a node in nftables mode', () => {
  const table = readFileSync(`${NODE_A_TABLE}.json`, 'utf8');
  const objects = clusterIpObjects(['10.244.1.4', '10.244.2.2']);
  const nft: Facts = { objects, nodes: { 'node-a': { 'nft-ip-kube-proxy': table } }, meta: {} };
  const node = analyze(
    { facts: nft, code: allModes },
    { target: { namespace: 'matrix', service: 'cluster-ip' } },
  ).nodes[0]!;

  it('its table and trees, no iptables dump', () => {
    assert.equal(node.source, 'nodes/node-a/nft-ip-kube-proxy.txt');
    assert.equal(node.rs, undefined);
    assert.equal(node.nft?.name, 'kube-proxy');
    assert.ok(node.trees?.services.some((t) => t.name === 'matrix/cluster-ip:http'));
    assert.equal(node.error, undefined);
  });

  it('searches the table, compares it, and walks a packet through it', () => {
    assert.ok(
      node
        .search()!
        .search('10.96.33.216')
        .some((h) => h.chain === 'service-ips'),
    );
    const drift = node.drift();
    assert.ok('findings' in drift, JSON.stringify(drift));
    assert.deepEqual(drift.findings, []);
    const { result: walk } = node.trace({
      src: '10.244.1.9',
      dst: '10.96.33.216',
      dport: 80,
      protocol: 'tcp',
      fromHost: false,
    });
    assert.deepEqual(walk.outcomes.map((o) => o.destination).sort(), [
      '10.244.1.4:80',
      '10.244.2.2:80',
    ]);
  });

  it('shows the map elements and chains behind a row in the raw pane', () => {
    const tree = node.trees!.services.find((t) => t.name === 'matrix/cluster-ip:http')!;
    const lines = nftRawLines(node.nft!, {
      key: 's',
      kind: 'service',
      tree,
      depth: 0,
      text: '',
    } as TreeRow);
    assert.deepEqual(
      lines.map((l) => l.text),
      [
        'service-ips { 10.96.33.216 . tcp . 80 : goto service-FN4G4LLS-matrix/cluster-ip/tcp/http }',
        'service-FN4G4LLS-matrix/cluster-ip/tcp/http: meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.244.1.4 . 80, 1 : 10.244.2.2 . 80 }',
      ],
    );
  });
});

const dual = await readSnapshot(
  new URL('../../snapshots/dual-stack-ipv6-rules-missing', import.meta.url).pathname,
);

describe('what the screens get from a dual-stack snapshot', () => {
  const data = analyze({ facts: dual, code: allModes }, { target });

  it("each node's IPv6 rules beside its IPv4 ones, named so", () => {
    assert.deepEqual(
      data.nodes.map((n) => `${n.label} ${n.source}`),
      [
        'vm-12-11-centos nodes/vm-12-11-centos/iptables-save.txt',
        'vm-12-11-centos IPv6 nodes/vm-12-11-centos/ip6tables-save.txt',
        'vm-12-7-centos nodes/vm-12-7-centos/iptables-save.txt',
        'vm-12-7-centos IPv6 nodes/vm-12-7-centos/ip6tables-save.txt',
      ],
    );
  });

  it('the Trace screen walks an IPv6 Pod to the IPv6 cluster IP through the IPv6 rules', () => {
    const pod = traceSources(data).find((s) => s.ip === 'fd00:10:244::3')!;
    assert.deepEqual([pod.kind, pod.node, pod.family], ['pod', 'vm-12-7-centos', 'IPv6']);
    const dest = traceDestinations(data, pod).find((d) => d.ip === 'fd00:10:96::be')!;
    assert.match(dest.label, /^\[fd00:10:96::be\]:8080\/tcp nginx-svc:http$/);
    const result = walk(data, pod, dest);
    assert.ok('result' in result, JSON.stringify(result));
    assert.deepEqual(result.result.outcomes.map((o) => o.destination).sort(), [
      '[fd00:10:244:1::7]:80',
      '[fd00:10:244::3]:80',
    ]);
  });
});

describe('what the screens get from a node in IPVS mode', async () => {
  const ipvs = await readSnapshot(
    new URL('../../snapshots/ipvs-stale-real-server', import.meta.url).pathname,
  );
  const node = analyze({ facts: ipvs, code: allModes }, { target }).nodes.find(
    (n) => n.name === 'vm-12-11-centos',
  )!;
  const tree = () => node.trees!.services.find((t) => t.name === 'default/nginx-svc:http')!;
  const row = (r: Partial<TreeRow>) => ({ key: 'r', depth: 0, tree: tree(), ...r }) as TreeRow;

  it('its virtual servers, not the iptables dump', () => {
    assert.equal(node.source, 'nodes/vm-12-11-centos/ipvsadm-save.txt');
    assert.equal(node.rs, undefined);
    assert.deepEqual(
      tree().endpoints.map((e) => e.address),
      ['10.244.0.3:80', '10.244.1.7:80'],
    );
  });

  it('shows the listing lines behind a row, each real server apart', () => {
    const lines = (r: Partial<TreeRow>) =>
      listingRawLines(node.ipvs!, row(r), 'ipvs').map((l) => l.text);
    assert.deepEqual(lines({ kind: 'service' }), [
      '-A -t 10.1.190.219:8080 -s rr',
      '-a -t 10.1.190.219:8080 -r 10.244.0.3:80 -m -w 1',
      '-a -t 10.1.190.219:8080 -r 10.244.1.7:80 -m -w 1',
    ]);
    assert.deepEqual(
      lines({
        kind: 'endpoint',
        endpoint: tree().endpoints[1]!,
        chain: tree().endpoints[1]!.chain,
      }),
      ['-a -t 10.1.190.219:8080 -r 10.244.1.7:80 -m -w 1'],
    );
    // two real servers of one virtual server are two rows
    const rows = treeRows(node.trees!, { open: {}, focus: 'default/nginx-svc' });
    const eps = rows.filter((r) => r.kind === 'endpoint');
    assert.equal(new Set(eps.map((r) => r.key)).size, eps.length);
  });

  it('compares them and says which listing line holds a real server', () => {
    const drift = node.drift();
    assert.ok('findings' in drift, JSON.stringify(drift));
    assert.deepEqual(
      drift.findings.map((f) => f.id),
      ['endpoint-stale', 'endpoint-missing', 'ipset-entry-missing'],
    );
    // the stale real server quoted with its listing line; the missing one not on the node
    const stale = drift.findings.find((f) => f.id === 'endpoint-stale')!;
    assert.deepEqual(stale.drift.actual, [
      'nodes/vm-12-11-centos/ipvsadm-save.txt:5: -a -t 10.1.190.219:8080 -r 10.244.1.7:80 -m -w 1',
    ]);
    assert.deepEqual(onNode(drift.findings, '-a -t 10.1.190.219:8080 -r 10.244.1.8:80 -m -w 1'), [
      false,
    ]);
  });
});

describe('what the screens get from a node where Cilium replaces kube-proxy', async () => {
  const cilium = await readSnapshot(
    new URL('../../snapshots/cilium-stale-backend', import.meta.url).pathname,
  );
  const data = analyze({ facts: cilium, code: allModes }, { target });
  const node = data.nodes.find((n) => n.name === 'vm-12-11-centos')!;
  const tree = () => node.trees!.services.find((t) => t.name === 'default/nginx-svc:http')!;

  it("its agent's table: the frontends as trees, each backend with its state", () => {
    assert.equal(node.source, 'nodes/vm-12-11-centos/cilium-frontends.txt');
    assert.equal(node.rs, undefined);
    assert.equal(node.cilium?.form, 'db-frontends');
    assert.deepEqual(
      tree().endpoints.map((e) => [e.address, e.cilium?.state]),
      [
        ['10.244.0.3:80', 'active'],
        ['10.244.1.7:80', 'active'],
      ],
    );
  });

  it("the raw pane shows the agent's own line behind a row (a frontend and its backends)", () => {
    const row = (r: Partial<TreeRow>) => ({ key: 'r', depth: 0, tree: tree(), ...r }) as TreeRow;
    const lines = listingRawLines(node.ciliumLines!, row({ kind: 'service' }), 'cilium');
    assert.equal(lines.length, 1, 'its one line, once');
    for (const l of lines) {
      assert.equal(l.table, 'cilium');
      assert.match(l.text, /^10\.1\.190\.219:8080\/TCP +ClusterIP +default\/nginx-svc +http/);
    }
  });

  it('drift, search and the packet walk work on it', () => {
    const d = node.drift();
    assert.ok(!('error' in d), JSON.stringify(d));
    assert.deepEqual(d.findings.map((f) => f.id).sort(), [
      'cilium-backend-missing',
      'cilium-backend-stale',
    ]);
    // the Drift view marks what the agent holds: the listed backend, not the missing one
    assert.deepEqual(onNode(d.findings, '10.244.0.3:80/TCP (active)'), [true]);
    assert.deepEqual(onNode(d.findings, '10.244.1.8:80/TCP (active)'), [false, false]);
    assert.ok(node.search()!.search('10.244.1.7').length > 0);
    assert.ok(traceSources(data).some((s) => s.node === 'vm-12-11-centos'));
    const { result: r } = node.trace({
      src: '10.244.1.8',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      fromHost: false,
    });
    assert.deepEqual(r.outcomes.map((o) => o.destination).sort(), [
      '10.244.0.3:80',
      '10.244.1.7:80',
    ]);
  });
});
