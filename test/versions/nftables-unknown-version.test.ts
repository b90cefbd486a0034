// Each release's real nftables table (the lab recordings, test/fixtures/releases/<minor>/nftables)
// on a node whose kube-proxy version is not read (its image pinned by digest, no /metrics) or not
// modelled (v1.38.0, v1.29.5, latest): drift and expect take the release the table reads as
// written by (nftables/drift/written-by.ts), say it is assumed, find nothing on the healthy
// table and still find a fault made on it (issue 38, r147 item 1).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { serviceCIDRs } from '../../src/core/kube/objects.js';
import { watchedServiceCIDRs } from '../../src/core/dataplane/kube-proxy/releases.js';
import { expectedNftText } from '../../src/core/dataplane/nftables/expected/expected.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { recordings } from './record.js';
import { allModes } from '../support/modes.js';

const nftables = recordings().filter((r) => r.mode === 'nftables');

/** The recording with kube-proxy's image tag replaced (`@sha256:...`: pinned by digest) and
 * nothing else saying its version (no /metrics, no nodeInfo.kubeProxyVersion). */
async function withImage(dir: string, tag: string): Promise<Facts> {
  const facts = await readSnapshot(dir);
  for (const n of Object.values(facts.nodes)) delete n['proxy-metrics'];
  for (const o of facts.objects) {
    const status = o['status'] as { nodeInfo?: { kubeProxyVersion?: string } } | undefined;
    if (o.kind === 'Node') delete status?.nodeInfo?.kubeProxyVersion;
    const spec = o['spec'] as { containers?: { image?: string }[] } | undefined;
    for (const c of spec?.containers ?? [])
      if (c.image?.includes('/kube-proxy:'))
        c.image = c.image.replace(/:[^:/]+$/, tag.startsWith('@') ? tag : `:${tag}`);
  }
  return facts;
}

const DIGEST = `@sha256:${'0123456789abcdef'.repeat(4)}`;
const findings = (a: Analysis, node: string) =>
  a
    .node(node)
    .drift()
    .findings.map((f) => `${severityOf(f)} ${f.id}: ${f.title}`);

describe("nftables drift and expect where kube-proxy's version is not read or not modelled", () => {
  it('has the nftables recordings', () => assert.ok(nftables.length >= 7));

  for (const { release, dir } of nftables)
    it(`v1.${release.minor}'s table, image by digest: compared as a release its table allows, no drift, expect notes it`, async () => {
      const facts = await withImage(dir, DIGEST);
      const a = new Analysis(facts, { code: allModes });
      for (const node of Object.keys(facts.nodes)) {
        assert.equal(a.state(node).version, undefined, `${node}: the version is not read`);
        const d = a.node(node).drift();
        assert.deepEqual(findings(a, node), [], `${node}: drift`);
        // the release compared writes what the recorded one writes: the same minor, or one the
        // table cannot tell from it (1.31/1.32, 1.34/1.35; 1.36/1.37 with no one-endpoint port)
        const as = d.release!.minor;
        assert.ok(as >= release.minor && as - release.minor <= 1, `${node}: compared as v1.${as}`);
        assert.match(d.writtenBy ?? '', /kube-proxy's version was not read: compared as v1\.\d+$/);
        assert.match(
          d.writtenBy ?? '',
          new RegExp(`^kube-proxy (v1\\.${release.minor}|1\\.\\d+-1\\.\\d+) \\(`),
        );
        const exp = a.node(node).expected();
        const text = expectedNftText(exp, watchedServiceCIDRs(exp.release, serviceCIDRs(a.view)));
        assert.match(text, new RegExp(`^# kdebug expect: .* kube-proxy v1\\.${as} writes`, 'm'));
        assert.match(
          text,
          /^# note: kube-proxy's version was not read; its table reads as written by kube-proxy /m,
        );
      }
    });

  for (const tag of ['v1.38.0', 'v1.29.5', 'latest'])
    it(`v1.34's table, image ${tag}: compared as 1.34-1.35, no drift`, async () => {
      const dir = nftables.find((r) => r.release.minor === 34)!.dir;
      const a = new Analysis(await withImage(dir, tag), { code: allModes });
      assert.deepEqual(findings(a, 'node-a'), []);
      const d = a.node('node-a').drift();
      // the nearest to the release read that the table allows
      assert.equal(d.release?.minor, tag === 'v1.29.5' ? 34 : 35);
      assert.match(
        d.writtenBy ?? '',
        tag === 'latest'
          ? /version was not read/
          : new RegExp(`v1\\.${tag.split('.')[1]} is not a modelled release`),
      );
    });

  it('a modelled version read newer than the table allows: compared as the newest it allows, the two said to disagree', async () => {
    const dir = nftables.find((r) => r.release.minor === 34)!.dir;
    const a = new Analysis(await withImage(dir, 'v1.37.2'), { code: allModes });
    const d = a.node('node-a').drift();
    // a 1.34 table holds a rule jumping to mark-for-masquerade, which 1.36 and later rewrite away
    assert.equal(d.release?.minor, 35);
    assert.deepEqual(d.releaseDisagrees, { read: 'v1.37', upTo: 'v1.35', comparedAs: 'v1.35' });
    assert.match(d.writtenBy ?? '', /^kube-proxy 1\.34-1\.35 \(.*not the v1\.37 read/);
    assert.deepEqual(findings(a, 'node-a'), []);
  });

  for (const { release, dir } of nftables)
    it(`v1.${release.minor}'s table, image by digest, a service-ips element deleted: the fault is found`, async () => {
      const facts = await withImage(dir, DIGEST);
      const stem = nftStems('IPv4').json;
      const json = JSON.parse(facts.nodes['node-a']![stem]!) as {
        nftables: Record<string, unknown>[];
      };
      const map = json.nftables.find(
        (x) => (x['map'] as { name?: string } | undefined)?.name === 'service-ips',
      )!['map'] as { elem: unknown[] };
      const before = map.elem.length;
      map.elem = map.elem.filter((e) => !JSON.stringify(e).includes('matrix/cluster-ip/tcp/http'));
      assert.equal(map.elem.length, before - 1);
      facts.nodes['node-a']![stem] = JSON.stringify(json);
      const a = new Analysis(facts, { code: allModes });
      assert.deepEqual(
        a
          .node('node-a')
          .drift()
          .findings.map((f) => `${f.id} ${f.service}`),
        ['service-rules-missing matrix/cluster-ip:http'],
      );
    });
});
