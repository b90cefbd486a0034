// Each modelled release's real kube-proxy, as the lab recorded it (npm run test:versions --
// --record: test/fixtures/releases/<minor>/<mode>/, a kdebug snapshot of the truth matrix; in
// IPVS mode node-a is the IPVS VM's), read as a user's snapshot is read: kdebug takes the release
// from what the recording holds (the kube-proxy Pod's image tag, its /metrics where recorded), and
// with no release given `kdebug expect` is what that kube-proxy wrote, compared as kube-proxy's own
// tests compare (truth.ts; IPVS: virtual and real servers, ipsets with their create options,
// kube-ipvs0 and both proxiers' iptables rules, ipvs-vm/truth.ts), and drift on it finds nothing.
// Nothing is built or run but nft (to list our script as nft lists the recorded table). IP
// conventions (the lab, topology.ts): Pod CIDR 10.244.0.0/16, Service CIDR 10.96.0.0/16, nodes
// 192.0.2.21 and .22.
import { severityOf } from '../../src/core/dataplane/drift.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import type { IPFamily } from '../../src/core/ipv6.js';
import { serviceCIDRs } from '../../src/core/kube/objects.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected/expected.js';
import { watchedServiceCIDRs } from '../../src/core/dataplane/kube-proxy/releases.js';
import { differences, nftDifferences } from '../support/cluster/truth.js';
import { hasCommand } from '../support/skip.js';
import { IPVS_NODE } from '../support/ipvs-vm/kube-proxy.js';
import { ipvsDifferences } from '../support/ipvs-vm/truth.js';
import { FIXTURES, inVm, isDual, proxyModeOf, recordedBy, recordings } from './record.js';
import { allModes } from '../support/modes.js';

const recorded = recordings();

/** The image of the kube-proxy Pod on `node`, read straight from objects.json. */
function imageOn(facts: Facts, node: string): { pod: string; image: string } | undefined {
  for (const o of facts.objects) {
    const spec = o['spec'] as { nodeName?: string; containers?: { image?: string }[] } | undefined;
    const image = spec?.containers?.find((c) => c.image?.includes('/kube-proxy:'))?.image;
    if (o.kind === 'Pod' && spec?.nodeName === node && image)
      return { pod: o.metadata!.name!, image };
  }
  return undefined;
}

const nft = hasCommand('nft') && hasCommand('unshare');
/** Our script of a family's table as nft lists it (JSON), loaded into a network namespace of its
 * own. */
const listed = (script: string, family: IPFamily) => {
  const table = family === 'IPv6' ? 'ip6' : 'ip';
  const r = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', `nft -f - && nft -j list table ${table} kube-proxy`],
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
    it(`v1.${release.minor} ${mode}: the release read from the recording, expect is what it wrote, drift finds nothing`, async (t) => {
      const truth = recordedBy(dir) ?? assert.fail(`${dir}/RECORDED names no kube-proxy`);
      assert.equal(truth.mode, proxyModeOf(mode), `${dir}/RECORDED`);
      const facts = await readSnapshot(dir);
      const analysis = new Analysis(facts, { code: allModes });
      const nodes = readdirSync(join(dir, 'nodes'));
      assert.ok(nodes.length > 0);
      for (const name of nodes) {
        // the version as kdebug reads it: the one the lab ran, from what the node recorded
        const version = analysis.state(name).version;
        assert.equal(version?.value.text, truth.version, `${name}: version`);
        assert.equal(version.value.minor, release.minor, `${name}: release`);
        if ('proxy-metrics' in facts.nodes[name]!) assert.equal(version.from, 'metrics', name);
        else {
          const { pod, image } = imageOn(facts, name) ?? assert.fail(`${name}: no kube-proxy Pod`);
          assert.equal(version.from, 'image', `${name}: version source`);
          assert.equal(version.source, `the image ${image} of Pod ${pod}`, name);
          assert.equal(version.evidence.kind, 'read', name);
        }

        // no release given: expect and drift model the one read; a dual-stack recording's
        // nodes run both families' proxiers, each compared with what it wrote
        const families: IPFamily[] = isDual(mode) ? ['IPv4', 'IPv6'] : ['IPv4'];
        for (const family of families) {
          const what = `${name} ${family}`;
          const node = analysis.node(name, undefined, family);
          const exp = node.expected();
          assert.equal(exp.release.minor, release.minor, `${what}: the release expect writes`);
          // an IPVS recording's other node is the lab's, in iptables mode
          const nodeMode = analysis.state(name).mode.value;
          assert.equal(
            nodeMode,
            inVm(mode) && name !== IPVS_NODE ? 'iptables' : proxyModeOf(mode),
            name,
          );
          if (nodeMode === 'ipvs') {
            if (family === 'IPv4') assert.deepEqual(ipvsDifferences(analysis, name), [], name);
          } else if (nodeMode === 'iptables') {
            const dump = family === 'IPv6' ? 'ip6tables-save' : 'iptables-save';
            const saved = facts.nodes[name]![dump] ?? assert.fail(`${what}: no ${dump} recorded`);
            assert.deepEqual(differences(expectedSave(exp), saved), [], `${what}: expect`);
          } else if (nft) {
            const { json: stem } = nftStems(family);
            const json = facts.nodes[name]![stem] ?? assert.fail(`${what}: no ${stem} recorded`);
            // what that release's kube-proxy knows of the Service CIDRs, as expect takes them
            const cidrs = watchedServiceCIDRs(exp.release, serviceCIDRs(analysis.view));
            const ours = listed(expectedNftScript(exp, cidrs).join('\n') + '\n', family);
            assert.deepEqual(nftDifferences(ours, json), [], `${what}: expect`);
          } else t.diagnostic('nft and unshare missing: the table is compared by drift only');
          const d = node.drift();
          assert.equal(d.release?.minor, release.minor, `${what}: the release drift compares with`);
          assert.deepEqual(
            d.findings.map((f) => `${severityOf(f)} ${f.id}: ${f.title}`),
            [],
            `${what}: drift`,
          );
        }
      }
    });
});

describe('what each release serves on /configz, read as the configuration it runs with', () => {
  // recorded by test/versions/record-configz.ts on node-a, where the release is built in the lab
  const served = recorded.filter(({ dir }) => existsSync(join(dir, 'proxy-configz.json')));
  it('has /configz recordings from before and after 1.31 moved its fields', () => {
    assert.ok(served.some(({ release }) => release.minor === 30));
    assert.ok(served.some(({ release }) => release.minor >= 31));
  });
  for (const { release, mode, dir } of served)
    it(`v1.${release.minor} ${mode}: its internal field names read, expect and drift as with the ConfigMap`, async () => {
      const facts = await readSnapshot(dir);
      facts.nodes['node-a']!['proxy-configz'] = readFileSync(
        join(dir, 'proxy-configz.json'),
        'utf8',
      );
      const analysis = new Analysis(facts, { code: allModes });
      const { config } = analysis.state('node-a');
      assert.equal(config.from, 'configz');
      // the lab's kube-proxy configuration (test/support/cluster/manifests.ts)
      assert.deepEqual(
        [config.value.mode, config.value.clusterCIDR, config.value.masqueradeBit],
        [mode, '10.244.0.0/16', 14],
      );
      assert.equal(analysis.state('node-a').mode.value, mode);
      const d = analysis.node('node-a').drift();
      assert.deepEqual(
        d.findings.map((f) => `${severityOf(f)} ${f.id}: ${f.title}`),
        [],
        'drift with the configuration /configz served',
      );
    });
});
