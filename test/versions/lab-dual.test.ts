// iptables and nftables mode in a dual-stack cluster, as the real kube-proxy of the oldest and
// newest release of each mode wrote them (test/fixtures/releases/<minor>/{iptables,nftables}-dual:
// every matrix Service RequireDualStack, EndpointSlices of both families, on both lab nodes):
// `kdebug expect --family ipv6` is what its IPv6 proxier wrote, drift in both families finds
// nothing, `kdebug svc` on a dual-stack Service passes with each family's rules observed, and a
// rule taken out of the IPv6 half of a copy is found there and only there. IP conventions (the
// lab, topology.ts): Services 10.96.0.0/16 and fd00:10:96::/112, Pods 10.244.0.0/16 and
// fd00:10:244::/48, nodes 192.0.2.21/.22 and 2001:db8::21/::22.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { clusterView } from '../../src/core/kube/objects.js';
import type { Finding, Report } from '../../src/core/model.js';
import { kdebug } from '../support/cli.js';
import { differences, nftDifferences } from '../support/cluster/truth.js';
import { MATRIX_NAMESPACE } from '../support/cluster/matrix.js';
import { hasCommand } from '../support/skip.js';
import { proxyModeOf, recordings } from './record.js';

const dual = recordings().filter((r) => r.mode === 'iptables-dual' || r.mode === 'nftables-dual');
const NODES = ['node-a', 'node-b'];
/** The IPv6 half of a node's rules as the snapshot holds it. */
const ipv6File = (mode: string) =>
  mode === 'nftables' ? 'nft-ip6-kube-proxy.txt' : 'ip6tables-save.txt';
const read = (dir: string, node: string, file: string) =>
  readFileSync(join(dir, 'nodes', node, file), 'utf8');

const nft = hasCommand('nft') && hasCommand('unshare');
/** A script of the ip6 table as nft lists it (JSON), loaded into a network namespace of its own. */
function listed(script: string): string {
  const r = spawnSync(
    'unshare',
    ['-n', 'sh', '-c', 'nft -f - && nft -j list table ip6 kube-proxy'],
    {
      input: script,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** `kdebug drift --all-nodes --family both -o json` on a copy of `dir` whose node-a IPv6 file
 * `edit` changed: the nodes' families that drift and the findings, each with its family. */
function driftOnCopy(dir: string, file: string, edit: (text: string) => string) {
  const tmp = mkdtempSync(join(tmpdir(), 'kdebug-lab-dual-'));
  try {
    cpSync(dir, tmp, { recursive: true });
    const path = join(tmp, 'nodes', 'node-a', file);
    const before = readFileSync(path, 'utf8');
    const after = edit(before);
    assert.notEqual(after, before, `the fault was made in ${file}`);
    writeFileSync(path, after);
    const r = kdebug(['drift', '--snapshot', tmp, '--all-nodes', '--family', 'both', '-o', 'json']);
    assert.equal(r.code, 1, r.stderr);
    const doc = JSON.parse(r.stdout) as {
      nodes: { node: string; family: string; drift: boolean }[];
      findings: { id: string; node: string; family: string; expected: string[] }[];
    };
    return {
      drifting: doc.nodes.filter((n) => n.drift).map((n) => `${n.node} ${n.family}`),
      findings: doc.findings.map((f) => `${f.node} ${f.family} ${f.id}: ${f.expected.join(' | ')}`),
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

describe('iptables and nftables mode in a dual-stack cluster (the lab recordings)', () => {
  it('has a dual-stack recording of each lab mode at its oldest and newest release', () =>
    assert.deepEqual(
      dual.map((r) => `${r.release.minor} ${r.mode}`).sort(),
      ['30 iptables-dual', '31 nftables-dual', '37 iptables-dual', '37 nftables-dual'],
      'npm run test:versions -- --record --modes iptables-dual,nftables-dual',
    ));

  for (const { release, mode, dir } of dual)
    describe(`v1.${release.minor} ${mode}`, () => {
      const proxy = proxyModeOf(mode);

      it('kube-proxy wrote every matrix Service at its IPv6 cluster IP on every node', async () => {
        const matrix = clusterView((await readSnapshot(dir)).objects).services.filter(
          (s) => s.namespace === MATRIX_NAMESPACE,
        );
        assert.ok(matrix.length > 0);
        for (const node of NODES) {
          const text = read(dir, node, ipv6File(proxy));
          for (const s of matrix) {
            const ip6 = s.clusterIPs.find((ip) => ip.includes(':'));
            assert.ok(ip6, `${s.name}: an IPv6 cluster IP`);
            assert.ok(
              text.includes(`"${ip6}"`) || text.includes(` ${ip6}/128 `),
              `${node} ${s.name}`,
            );
          }
        }
      });

      it('expect --family ipv6 is what its IPv6 proxier wrote, on each node', (t) => {
        for (const node of NODES) {
          const r = kdebug(['expect', '--snapshot', dir, '--node', node, '--family', 'ipv6']);
          assert.equal(r.code, 0, r.stderr);
          assert.doesNotMatch(r.stdout, /\b10\.(96|244)\.\d+\.\d+/, 'no IPv4 address in IPv6');
          const recorded = read(dir, node, ipv6File(proxy));
          if (proxy === 'iptables')
            assert.deepEqual(differences(r.stdout, recorded), [], `${node}: expect`);
          else if (nft) assert.deepEqual(nftDifferences(listed(r.stdout), recorded), [], node);
          else t.diagnostic('nft and unshare missing: recorded.test.ts compares by drift only');
        }
        // both: each family's part, the IPv6 one the same as asked alone
        const both = kdebug(['expect', '--snapshot', dir, '--node', 'node-a', '--family', 'both']);
        assert.equal(both.code, 0, both.stderr);
        assert.match(both.stdout, /\b10\.96\.\d+\.\d+/);
        assert.match(both.stdout, /fd00:10:96::/);
      });

      it('drift --all-nodes --family both finds nothing, each family of each node compared', () => {
        const r = kdebug(['drift', '--snapshot', dir, '--all-nodes', '--family', 'both']);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /2 nodes \(2 IPv4 rule sets, 2 IPv6 rule sets\): no drift/);
      });

      it('kdebug svc on a dual-stack Service passes, its rules observed in both families', () => {
        const r = kdebug([
          'svc',
          `${MATRIX_NAMESPACE}/cluster-ip`,
          '--snapshot',
          dir,
          '-o',
          'json',
        ]);
        assert.equal(r.code, 0, r.stderr);
        const report = JSON.parse(r.stdout) as Report;
        const rules = report.steps.find((s) => s.id === 'rules');
        assert.equal(rules?.status, 'pass');
        for (const family of ['IPv4', 'IPv6']) {
          const f: Finding | undefined = rules.findings.find((x) =>
            x.title.startsWith(`${family}: `),
          );
          assert.equal(f?.status, 'pass', family);
          assert.deepEqual(
            NODES.filter((n) => !f.evidence.some((e) => e.kind === 'observed' && e.node === n)),
            [],
            `${family}: nodes whose rules were not observed`,
          );
        }
      });

      it('a rule taken out of the IPv6 half of a copy is drift on that node in IPv6 only', () => {
        if (proxy === 'iptables') {
          // an IPv6 endpoint's DNAT: that endpoint's rules named missing
          let removed = '';
          const d = driftOnCopy(dir, 'ip6tables-save.txt', (s) =>
            s.replace(/^-A KUBE-SEP-\S+ .*DNAT --to-destination \[fd00:10:244:[^\n]*\n/m, (l) => {
              removed = l.trim();
              return '';
            }),
          );
          assert.deepEqual(d.drifting, ['node-a IPv6']);
          assert.ok(
            d.findings.some(
              (f) =>
                f.startsWith('node-a IPv6 endpoint-dnat-missing: ') &&
                f.includes(`-t nat ${removed}`),
            ),
            d.findings.join('\n'),
          );
          for (const f of d.findings) assert.match(f, /^node-a IPv6 /);
        } else {
          // an IPv6 cluster IP's element of the service-ips map: that element named missing
          let removed:
            | { elem: { concat: (string | number)[] }; verdict: { goto: { target: string } } }
            | undefined;
          const d = driftOnCopy(dir, 'nft-ip6-kube-proxy.txt', (s) => {
            const doc = JSON.parse(s) as {
              nftables: Record<string, { name?: string; elem?: unknown[][] }>[];
            };
            const map = doc.nftables.find((o) => o['map']?.name === 'service-ips')!['map']!;
            const [elem, verdict] = map.elem!.shift() as [never, never];
            removed = { elem, verdict };
            return JSON.stringify(doc);
          });
          assert.ok(removed);
          assert.deepEqual(d, {
            drifting: ['node-a IPv6'],
            findings: [
              `node-a IPv6 service-rules-missing: add element ip6 kube-proxy service-ips { ${removed.elem.concat.join(' . ')} : goto ${removed.verdict.goto.target} }`,
            ],
          });
        }
      });
    });
});
