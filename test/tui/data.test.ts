// IP conventions: the demo snapshot (the demo cluster): Pod CIDR 10.244.0.0/16, Service CIDR
// 10.1.0.0/16, nodes vm-12-7-centos (10.0.12.7) and vm-12-11-centos (10.0.12.11).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot.js';
import type { Facts } from '../../src/core/model.js';
import { analyze, searchNodes } from '../../src/tui/data.js';

const facts = await readSnapshot(new URL('../../snapshots/nginx-svc', import.meta.url).pathname);
const target = { namespace: 'default', service: 'nginx-svc' };

describe('what the screens get from the core', () => {
  const data = analyze(facts, { target });

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
    const collecting = analyze(empty, { target, collecting: { objects: true, nodes: true } });
    assert.ok(collecting.report!.steps.every((s) => s.status === 'pending'));
  });

  it('keeps a dump that does not parse as an error on its node', () => {
    const broken = structuredClone(facts);
    broken.nodes['vm-12-7-centos']!['iptables-save'] = '*nat\n-A KUBE-SERVICES --bogus\nCOMMIT\n';
    const node = analyze(broken).nodes.find((n) => n.name === 'vm-12-7-centos')!;
    assert.equal(node.trees, undefined);
    assert.match(node.error!, /^nodes\/vm-12-7-centos\/iptables-save\.txt:2: /);
    assert.deepEqual(node.drift(), { error: node.error });
  });

  it('says why there is no drift for rules without the cluster objects', () => {
    const text = facts.nodes['vm-12-7-centos']!['iptables-save']!;
    const onlyRules = analyze(
      { objects: [], nodes: {}, meta: {} },
      { rules: { label: 'dump.txt', text } },
    );
    assert.match(
      (onlyRules.nodes[0]!.drift() as { error: string }).error,
      /Services and their endpoints/,
    );
  });
});
