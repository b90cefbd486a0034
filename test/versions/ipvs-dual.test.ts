// IPVS mode in a dual-stack cluster, as each recorded release's real kube-proxy programmed it in
// the IPVS VM (test/fixtures/releases/<minor>/ipvs-dual, node-a; every matrix Service
// RequireDualStack, EndpointSlices of both families): kdebug expect --family ipv6 prints what its
// IPv6 proxier wrote (virtual and real servers at bracketed addresses, the KUBE-6-* inet6 sets'
// entries, kube-ipvs0's IPv6 addresses), drift finds nothing in either family, and a fault made
// in the IPv6 half of the recording is found there and only there. IP conventions (the lab,
// topology.ts): Services 10.96.0.0/16 and fd00:10:96::/112, Pods 10.244.0.0/16 and
// fd00:10:244::/48, node-a 192.0.2.21 and 2001:db8::21.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { kdebug } from '../support/cli.js';
import { MATRIX_NAMESPACE } from '../support/cluster/matrix.js';
import { IPVS_NODE } from '../support/ipvs-vm/kube-proxy.js';
import { FIXTURES, recordings } from './record.js';
import { allModes } from '../support/modes.js';

const dual = recordings().filter((r) => r.mode === 'ipvs-dual');
const nodeFile = (dir: string, stem: string) =>
  readFileSync(join(dir, 'nodes', IPVS_NODE, `${stem}.txt`), 'utf8');

/** The IPv6 half of what the node holds, in the words `kdebug expect` prints it. */
function ipv6Half(dir: string) {
  const ipvs = nodeFile(dir, 'ipvsadm-save').split('\n');
  const bound = /^kube-ipvs0\s+\S+\s+(.*)$/m.exec(nodeFile(dir, 'ip-addr'))?.[1] ?? '';
  return {
    ipvs: ipvs.filter((l) => /^-[Aa] \S+ \[/.test(l)).sort(),
    entries: nodeFile(dir, 'ipset-save')
      .split('\n')
      .filter((l) => l.startsWith('add KUBE-6-'))
      .sort(),
    bound: bound
      .split(/\s+/)
      .filter((a) => a.includes(':'))
      .sort(),
  };
}

/** node-a's drift findings in each family once `edit` changed one of its files. */
async function driftWith(dir: string, stem: string, edit: (text: string) => string) {
  const facts = await readSnapshot(dir);
  const files = facts.nodes[IPVS_NODE]!;
  const before = files[stem]!;
  files[stem] = edit(before);
  assert.notEqual(files[stem], before, `the fault was made in ${stem}`);
  const analysis = new Analysis(facts, { code: allModes });
  const findings = (family: 'IPv4' | 'IPv6') =>
    analysis
      .node(IPVS_NODE, undefined, family)
      .drift()
      .findings.map((f) => `${severityOf(f)} ${f.id}: ${f.drift.expected.join(' | ')}`);
  return { IPv4: findings('IPv4'), IPv6: findings('IPv6') };
}

describe('IPVS mode in a dual-stack cluster (the IPVS VM recordings)', () => {
  it('has a dual-stack IPVS recording of the newest release', () =>
    assert.ok(
      dual.some((r) => r.release.minor === 37),
      `none in ${FIXTURES}/37/ipvs-dual: npm run test:versions -- --record --modes ipvs-dual`,
    ));

  for (const { release, dir } of dual)
    describe(`v1.${release.minor}`, () => {
      it('kube-proxy programmed every matrix Service port at its IPv6 cluster IP', async () => {
        const { ipvs } = ipv6Half(dir);
        const matrix = clusterView((await readSnapshot(dir)).objects).services.filter(
          (s) => s.namespace === MATRIX_NAMESPACE,
        );
        assert.ok(matrix.length > 0);
        for (const s of matrix) {
          const ip6 = s.clusterIPs.find((ip) => ip.includes(':'));
          assert.ok(ip6, `${s.name}: an IPv6 cluster IP`);
          for (const p of s.ports)
            assert.ok(
              ipvs.some((l) => l.startsWith('-A ') && l.includes(` [${ip6}]:${p.port} `)),
              `${s.name}: a virtual server at [${ip6}]:${p.port}`,
            );
        }
      });

      it('expect --family ipv6 is what the IPv6 proxier wrote: servers, set entries, kube-ipvs0', () => {
        const r = kdebug(['expect', '--snapshot', dir, '--node', IPVS_NODE, '--family', 'ipv6']);
        assert.equal(r.code, 0, r.stderr);
        const out = r.stdout.split('\n');
        const recorded = ipv6Half(dir);
        assert.ok(
          recorded.ipvs.some((l) => l.startsWith('-a ')),
          'IPv6 real servers recorded',
        );
        assert.deepEqual(out.filter((l) => /^-[Aa] \S+ \[/.test(l)).sort(), recorded.ipvs);
        assert.deepEqual(out.filter((l) => l.startsWith('add ')).sort(), recorded.entries);
        const kubeIpvs0 = r.stdout.split(/^# kube-ipvs0.*\n/m)[1]!.split(/^#/m)[0]!;
        assert.deepEqual(kubeIpvs0.trim().split('\n').sort(), recorded.bound);
        // nothing of the IPv4 proxier's in the IPv6 one's output
        assert.doesNotMatch(r.stdout, /^-[Aa] \S+ \d+\.\d+\.\d+\.\d+:/m);
      });

      it('drift in both families finds nothing, each family compared', () => {
        const r = kdebug(['drift', '--snapshot', dir, '--node', IPVS_NODE, '--family', 'both']);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /^node node-a IPv6 \(snapshot/m);
        assert.match(r.stdout, /1 node \(1 IPv4 rule set, 1 IPv6 rule set\): no drift/);
      });

      it('an IPv6 real server removed is an IPv6 endpoint missing, the IPv4 proxier has none', async () => {
        let removed = '';
        const d = await driftWith(dir, 'ipvsadm-save', (s) =>
          s.replace(/^-a -t (\[fd00:10:96::[0-9a-f]+\]:80) -r (\S+) .*\n/m, (l) => {
            removed = l.trim();
            return '';
          }),
        );
        assert.deepEqual(d, { IPv4: [], IPv6: [`warning endpoint-missing: ${removed}`] });
      });

      it('an inet6 set entry removed and an IPv6 VIP off kube-ipvs0 are found in IPv6 only', async () => {
        let entry = '';
        const set = await driftWith(dir, 'ipset-save', (s) =>
          s.replace(/^add KUBE-6-CLUSTER-IP (\S+)\n/m, (l) => {
            entry = l.trim();
            return '';
          }),
        );
        assert.deepEqual(set, { IPv4: [], IPv6: [`warning ipset-entry-missing: ${entry}`] });
        let vip = '';
        const addr = await driftWith(dir, 'ip-addr', (s) =>
          s.replace(/ (fd00:10:96::[0-9a-f]+)\/128/, (_, ip: string) => {
            vip = ip;
            return '';
          }),
        );
        assert.deepEqual(addr, {
          IPv4: [],
          IPv6: [`error vip-not-on-kube-ipvs0: ip addr add ${vip}/128 dev kube-ipvs0`],
        });
      });

      it('through the CLI: drift on a copy with an IPv6 real server removed exits 1 and names it', () => {
        const tmp = mkdtempSync(join(tmpdir(), 'kdebug-ipvs-dual-'));
        try {
          cpSync(dir, tmp, { recursive: true });
          const file = join(tmp, 'nodes', IPVS_NODE, 'ipvsadm-save.txt');
          const text = readFileSync(file, 'utf8');
          const line = /^-a -u \[fd00:10:96::[0-9a-f]+\]:53 -r (\S+) .*$/m.exec(text);
          assert.ok(line, 'an IPv6 UDP real server recorded');
          writeFileSync(file, text.replace(`${line[0]}\n`, ''));
          const r = kdebug(['drift', '--snapshot', tmp, '--node', IPVS_NODE, '-o', 'json']);
          assert.equal(r.code, 1, r.stderr);
          const doc = JSON.parse(r.stdout) as {
            nodes: { family: string; drift: boolean }[];
            findings: { id: string; family: string; expected: string[] }[];
          };
          assert.deepEqual(
            doc.nodes.map((n) => `${n.family} ${n.drift}`),
            ['IPv4 false', 'IPv6 true'],
          );
          assert.deepEqual(
            doc.findings.map((f) => `${f.family} ${f.id}: ${f.expected.join(' | ')}`),
            [`IPv6 endpoint-missing: ${line[0]}`],
          );
        } finally {
          rmSync(tmp, { recursive: true, force: true });
        }
      });
    });
});
