import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hairpinCheck } from '../../../src/core/checks/hairpin.js';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import type { KubeObject } from '../../../src/core/model.js';
import { dumpFor, dumps, facts, healthy, ids, run } from './builders.js';

describe('hairpin step', () => {
  it('passes when every endpoint is masqueraded on its own node, and says what else hairpin needs', () => {
    const [f] = run(hairpinCheck, facts(healthy(), dumps(healthy())));
    assert.equal(`${f!.id}:${f!.status}`, 'hairpin-masquerade-present:pass');
    assert.match(f!.explanation, /hairpin_mode/);
    assert.equal(f!.evidence.length, 2);
  });

  it('fails for the Pod whose KUBE-SEP chain lost its masquerade rule, on its node only', () => {
    const broken = dumpFor(healthy(), 'node-a')
      .split('\n')
      .filter((l) => !l.includes('-s 10.244.0.5/32'))
      .join('\n');
    const found = run(
      hairpinCheck,
      facts(healthy(), { ...dumps(healthy()), 'node-a': { 'iptables-save': broken } }),
    );
    assert.deepEqual(ids(found), ['hairpin-masquerade-missing:fail']);
    assert.equal(found[0]!.node, 'node-a');
    assert.match(found[0]!.title, /^web-1 cannot reach itself through the Service/);
    assert.match(found[0]!.explanation, /source and destination both 10\.244\.0\.5/);
  });

  it('is skipped without rules, pending while they are read', () => {
    assert.deepEqual(ids(run(hairpinCheck, facts(healthy()))), ['hairpin-not-checked:skip']);
    assert.deepEqual(ids(run(hairpinCheck, facts(healthy()), { collecting: { nodes: true } })), [
      'pending:pending',
    ]);
  });
});

// The Endpoints step and the Rules step take each node's endpoints from what its kube-proxy reads
// (endpoint-source.ts): on nginx-svc's v1.15 nodes the legacy Endpoints. Hairpin does the same.
describe('hairpin on nodes whose kube-proxy reads the legacy Endpoints', () => {
  type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** nginx-svc's EndpointSlice emptied; its Endpoints still list both Pods ready. */
  const sliceEmptied = (objects: KubeObject[]): KubeObject[] =>
    objects.map((o) => {
      const j = structuredClone(o) as Json;
      if (
        j.kind === 'EndpointSlice' &&
        j.metadata?.labels?.['kubernetes.io/service-name'] === 'nginx-svc'
      )
        j.endpoints = [];
      return j as KubeObject;
    });

  it('checks the endpoints the rules hold (from the Endpoints), not "no ready endpoints"', async () => {
    const read = await readSnapshot('snapshots/nginx-svc');
    const f = { ...read, objects: sliceEmptied(read.objects) };
    const found = run(hairpinCheck, f, {}, { namespace: 'default', service: 'nginx-svc' });
    assert.deepEqual(ids(found), ['hairpin-masquerade-present:pass']);
    const said = found[0]!.evidence.map(evidenceText).join('\n');
    assert.match(said, /KUBE-SEP-FNO4E6JYD7EGUHTP -s 10\.244\.1\.7\/32 -j KUBE-MARK-MASQ/);
    assert.match(said, /KUBE-SEP-SMDVMBZNJPO5AA7R -s 10\.244\.0\.3\/32 -j KUBE-MARK-MASQ/);
    // of each endpoint chain, the rule that jumps to the masquerade mark: not its DNAT
    assert.doesNotMatch(said, /-j DNAT/);
  });

  it("says an endpoint not checked beside another's failure, in IPVS mode as in iptables mode: never left out", async () => {
    const read = await readSnapshot('snapshots/ipvs-stale-real-server');
    delete read.nodes['vm-12-7-centos']!['ipset-save'];
    const found = run(hairpinCheck, read, {}, { namespace: 'default', service: 'nginx-svc' });
    assert.deepEqual(ids(found), ['hairpin-masquerade-missing:fail', 'hairpin-not-observed:skip']);
    assert.equal(found[1]!.title, 'hairpin of nginx-55fc968d9-kh24k not checked');
    assert.match(found[1]!.evidence.map(evidenceText).join('\n'), /kh24k on vm-12-7-centos: /);
  });

  it('names a dual-stack Pod not checked in both families once, with its families, and each entry its family', async () => {
    const read = await readSnapshot('snapshots/dual-stack-ipv6-rules-missing');
    // the node's two dumps swapped: neither family's rules read as its own
    const n = read.nodes['vm-12-7-centos']!;
    [n['iptables-save'], n['ip6tables-save']] = [n['ip6tables-save']!, n['iptables-save']!];
    const found = run(hairpinCheck, read, {}, { namespace: 'default', service: 'nginx-svc' });
    const f = found.find((x) => x.id === 'hairpin-not-observed')!;
    assert.equal(
      f.title,
      'hairpin of nginx-55fc968d9-kh24k (IPv4 and IPv6) and nginx-55fc968d9-4pddn (IPv6) not checked',
    );
    const said = f.evidence.map(evidenceText).join('\n');
    assert.match(said, /nginx-55fc968d9-kh24k \(IPv4\) on vm-12-7-centos: /);
    assert.match(said, /nginx-55fc968d9-kh24k \(IPv6\) on vm-12-7-centos: /);
  });
});

describe('hairpin for a Service whose endpoints are not Pods', () => {
  it('default/kubernetes: its endpoint is the API server\'s host address, not "no ready endpoints"', async () => {
    // before: "no ready endpoints: no Pod can be sent to itself", beside step 4's "1 of 1 ready"
    const read = await readSnapshot('snapshots/nginx-svc');
    const found = run(hairpinCheck, read, {}, { namespace: 'default', service: 'kubernetes' });
    assert.deepEqual(ids(found), ['hairpin-not-checked:skip']);
    assert.match(found[0]!.title, /^its endpoint is not a Pod \(the API server's host address\)/);
    assert.doesNotMatch(found[0]!.title, /no ready endpoints/);
  });
});
