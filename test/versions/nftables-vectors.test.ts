// Every modelled release against its own vector: the transaction its TestOverallNFTablesRules
// expects (test/fixtures/releases/<minor>/, verbatim from that tag's proxier_test.go) is, line
// for line, what `kdebug expect` writes for the same objects as that release, drift finds
// nothing wrong in it, and a line lost from it is the same finding whichever release spelled it.
// IP conventions (kube-proxy's proxier_test.go): Pod CIDR 10.0.0.0/8, Service CIDR
// 172.30.0.0/16, node test-node 192.168.0.2.
import { severityOf } from '../../src/core/dataplane/drift.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  expectedRules,
  type ExpectedRules,
  type ExpectOptions,
} from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView, serviceCIDRs } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { nftablesDrift } from '../../src/core/dataplane/nftables/drift.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected/expected.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { MODELLED } from '../../src/core/dataplane/kube-proxy/releases.js';
import { NODE, objects, objectsV6 } from '../support/nft-overall.js';
import { hasCommand } from '../support/skip.js';

const vector = (minor: number, family: 'v4' | 'v6') => {
  const file = new URL(
    `../fixtures/releases/${minor}/nftables-overall-${family}.nft`,
    import.meta.url,
  );
  if (!existsSync(file)) return undefined;
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
};

const cases = MODELLED.flatMap((release) =>
  (['v4', 'v6'] as const).map((family) => ({
    release,
    family,
    theirs: vector(release.minor, family),
  })),
);

/** One line of each release's vector, and the finding its loss is. */
const FAULTS: [string, string, string][] = [
  [
    'svc1 cluster IP element gone',
    'service-ips { 172.30.0.41 . tcp . 80 :',
    'service-rules-missing',
  ],
  ['svc5 firewall drop gone', 'p80 ip saddr != { 203.0.113.0/25 } drop', 'firewall-missing'],
  ['svc6 reject gone', 'no-endpoint-services { 172.30.0.46 .', 'no-endpoints-reject-missing'],
];

/** Drift of the table `lines` make against `exp`: "id: title" of each error and warning. */
function driftOf(exp: ExpectedRules, cidrs: string[], lines: string[], minor: number) {
  const table = parseNftScript(lines.join('\n')).tables[0]!;
  const lbIPs = new Set(exp.servicePorts.flatMap((sp) => sp.loadBalancerIPs));
  return nftablesDrift({
    node: NODE,
    source: `test/fixtures/releases/${minor}`,
    expected: exp,
    serviceCIDRs: cidrs,
    table,
    trees: buildNftServiceTrees(table, { loadBalancerIPs: lbIPs }),
    scoped: false,
  })
    .findings.filter((f) => severityOf(f) !== 'info')
    .map((f) => `${f.id}: ${f.title}`);
}

const run = (objs: KubeObject[], options: ExpectOptions) => {
  const view = clusterView(objs);
  return { exp: expectedRules(view, NODE, options), cidrs: serviceCIDRs(view) };
};

describe("kdebug expect in nftables mode, against each release's own expected transaction", () => {
  it('has a vector for every modelled release', () => {
    assert.deepEqual(
      cases.filter((c) => c.family === 'v4' && !c.theirs).map((c) => c.release.minor),
      [],
    );
  });

  for (const { release, family, theirs } of cases) {
    if (!theirs) continue;
    const options: ExpectOptions = { release, ...(family === 'v6' ? { family: 'IPv6' } : {}) };
    const { exp, cidrs } = run(family === 'v6' ? objectsV6 : objects, options);

    it(`v1.${release.minor} ${family}: writes what that release writes`, () => {
      assert.deepEqual([...expectedNftScript(exp, cidrs)].sort(), [...theirs].sort());
    });

    it(`v1.${release.minor} ${family}: drift on that release's clean table finds nothing wrong`, () => {
      assert.deepEqual(driftOf(exp, cidrs, theirs, release.minor), []);
    });

    // the same fault in each release's spelling is the same finding
    if (family === 'v4')
      for (const [what, line, id] of FAULTS)
        it(`v1.${release.minor}: ${what} is ${id}`, () => {
          const edited = theirs.filter((l) => !l.includes(line));
          assert.equal(edited.length, theirs.length - 1, `${line} not in the vector`);
          assert.deepEqual(
            driftOf(exp, cidrs, edited, release.minor).map((f) => f.split(':')[0]),
            [id],
          );
        });
  }

  // the releases without an IPv6 vector: at least the real nft loads what is written for them
  const loads = hasCommand('nft') && hasCommand('unshare');
  for (const { release } of cases.filter((c) => c.family === 'v6' && !c.theirs))
    it(`v1.${release.minor} v6: the real nft loads the ip6 table written for it`, (t) => {
      if (!loads) return t.skip('nft and unshare (nftables, util-linux)');
      const { exp, cidrs } = run(objectsV6, { release, family: 'IPv6' });
      const r = spawnSync('unshare', ['-n', 'nft', '-c', '-f', '-'], {
        input: expectedNftScript(exp, cidrs).join('\n') + '\n',
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
    });

  it('an older release is not written as the newest (the vectors differ)', () => {
    const { exp, cidrs } = run(objects, { release: { minor: 35 } });
    assert.notDeepEqual([...expectedNftScript(exp, cidrs)].sort(), [...vector(37, 'v4')!].sort());
  });
});
