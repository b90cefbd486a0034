// Each modelled release's real kube-proxy, as the lab recorded it (npm run test:versions --
// --record: test/fixtures/releases/<minor>/<mode>/, a kdebug snapshot of the truth matrix): what
// `kdebug expect` writes for that release is what it wrote, compared as kube-proxy's own tests
// compare (truth.ts), and drift on it finds nothing wrong. Nothing is built or run but nft (to
// list our script as nft lists the recorded table). IP conventions (the lab, topology.ts): Pod
// CIDR 10.244.0.0/16, Service CIDR 10.96.0.0/16, nodes 192.0.2.21 and .22.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot.js';
import { Analysis } from '../../src/core/analysis.js';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { expectedSave } from '../../src/core/dataplane/expected.js';
import { nftStems } from '../../src/core/facts.js';
import { serviceCIDRs } from '../../src/core/kube/objects.js';
import { nftablesDrift } from '../../src/core/dataplane/nftables/drift.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { watchedServiceCIDRs, MODELLED } from '../../src/core/dataplane/releases.js';
import { differences, nftDifferences } from '../support/cluster/truth.js';
import { hasCommand } from '../support/skip.js';
import { FIXTURES, modesOf } from './record.js';

const recorded = MODELLED.flatMap((release) =>
  modesOf(release.minor).map((mode) => ({
    release,
    mode,
    dir: join(FIXTURES, String(release.minor), mode),
  })),
).filter((r) => existsSync(join(r.dir, 'objects.json')));

const nft = hasCommand('nft') && hasCommand('unshare');
/** Our script as nft lists it (JSON), loaded into a network namespace of its own. */
const listed = (script: string) => {
  const r = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', 'nft -f - && nft -j list table ip kube-proxy'],
    {
      input: script,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};

describe('expect and drift against what each release really wrote (the lab recordings)', () => {
  it('has recordings', (t) => {
    if (recorded.length === 0) t.skip(`none in ${FIXTURES}: npm run test:versions -- --record`);
  });

  for (const { release, mode, dir } of recorded)
    it(`v1.${release.minor} ${mode}: expect is what it wrote, drift finds nothing wrong`, async (t) => {
      const facts = await readSnapshot(dir);
      const analysis = new Analysis(facts);
      const nodes = readdirSync(join(dir, 'nodes'));
      assert.ok(nodes.length > 0);
      for (const name of nodes) {
        const node = analysis.node(name);
        const exp = node.expected(undefined, { release });
        const source = `${dir}/nodes/${name}`;
        if (mode === 'iptables') {
          const saved = facts.nodes[name]!['iptables-save']!;
          assert.deepEqual(differences(expectedSave(exp), saved), [], `${name}: expect`);
          const d = nodeDrift({
            node: name,
            source,
            expected: exp,
            actual: node.rules()!.ruleset!,
            view: analysis.view,
          });
          assert.deepEqual(bad(d.findings), [], `${name}: drift`);
        } else {
          const table = node.nft()!.table!;
          // what that release's kube-proxy knows of them, as expect and drift take it
          const cidrs = watchedServiceCIDRs(release, serviceCIDRs(analysis.view));
          if (nft) {
            const json = facts.nodes[name]![nftStems('IPv4').json] ?? '';
            const ours = listed(expectedNftScript(exp, cidrs).join('\n') + '\n');
            assert.deepEqual(nftDifferences(ours, json), [], `${name}: expect`);
          } else t.diagnostic('nft and unshare missing: the table is compared by drift only');
          const lbIPs = new Set(exp.servicePorts.flatMap((sp) => sp.loadBalancerIPs));
          const d = nftablesDrift({
            node: name,
            source,
            expected: exp,
            serviceCIDRs: cidrs,
            table,
            trees: buildNftServiceTrees(table, { loadBalancerIPs: lbIPs }),
            scoped: false,
          });
          assert.deepEqual(bad(d.findings), [], `${name}: drift`);
        }
      }
    });
});

const bad = (f: { severity: string; id: string; title: string }[]) =>
  f.filter((x) => x.severity !== 'info').map((x) => `${x.id}: ${x.title}`);
