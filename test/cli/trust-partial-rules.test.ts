// A ClusterIP probe that answered from a node whose rules (as the Rules step read them) do not take
// a share of connections to an endpoint: one answer is the share that works, not a pass there.
import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug, ROOT, type CliResult } from '../support/cli.js';

const WIDE = { COLUMNS: '200' };

interface Doc {
  steps: {
    id: string;
    status: string;
    findings: {
      id: string;
      status: string;
      title: string;
      explanation: string;
      node?: string;
      evidence: { kind: string; text: string }[];
    }[];
  }[];
}

/** Runs `test` on a copy of a bundled snapshot whose node files `edit` changed. */
function withCopy(name: string, edit: (nodes: string) => void, test: (dir: string) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-partial-'));
  try {
    cpSync(join(ROOT, 'snapshots', name), dir, { recursive: true });
    edit(join(dir, 'nodes'));
    test(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Deletes an endpoint chain (its declaration and rules) from a dump, keeping the jumps to it. */
function dropChain(file: string, chain: string) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const kept = lines.filter((l) => !l.startsWith(`:${chain} `) && !l.startsWith(`-A ${chain} `));
  assert.equal(kept.length, lines.length - 3, 'the chain and its two rules deleted');
  assert.ok(
    kept.some((l) => l.endsWith(`-j ${chain}`)),
    'the jump to it kept',
  );
  writeFileSync(file, kept.join('\n'));
}

/** The mark and the line of one step, as a wide terminal prints it. */
function step(r: CliResult, title: string): string {
  const line = r.stdout.split('\n').find((l) => new RegExp(`^ \\S +\\d+ ${title} {2,}`).test(l));
  assert.ok(line, `no ${title} step in:\n${r.stdout}${r.stderr}`);
  return line.replace(/^ (\S) +\d+ \S+(?: \S+)*? {2,}/, '$1 ');
}

const reachability = (dir: string) => {
  const r = kdebug(['svc', '--snapshot', dir, '-o', 'json'], { env: WIDE });
  assert.equal(r.code, 1, r.stderr);
  return (JSON.parse(r.stdout) as Doc).steps.find((s) => s.id === 'reachability')!;
};

describe('a probe that answered where the rules lose a share of connections', () => {
  // before: "✓ 8 Reachability  ClusterIP 10.1.190.219:8080 answers from vm-12-11-centos and
  // vm-12-7-centos" beside Rules' "✗ … jump to KUBE-SEP-FNO4E6JYD7EGUHTP, which is missing"
  it("an endpoint chain deleted on a node: that node's answer is Rules' symptom, not a pass", () =>
    withCopy(
      'nginx-svc',
      (nodes) =>
        dropChain(join(nodes, 'vm-12-11-centos', 'iptables-save.txt'), 'KUBE-SEP-FNO4E6JYD7EGUHTP'),
      (dir) => {
        const r = kdebug(['svc', '--snapshot', dir, '--no-color', '--verbose'], { env: WIDE });
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          step(r, 'Reachability'),
          /^! ClusterIP 10\.1\.190\.219:8080: the probe from vm-12-11-centos answered, but its rules do not take 50% of connections to an endpoint$/,
        );
        const flat = r.stdout.replace(/\s+/g, ' ');
        assert.match(flat, /This follows from jump-target-missing \(Rules\): fix that first\./);
        // the other node's answer passes, for it alone
        assert.match(flat, /✓ ClusterIP 10\.1\.190\.219:8080 answers from vm-12-7-centos \[/);
        assert.match(
          flat,
          /Problem at step 7 \(Rules\): vm-12-11-centos: jump to KUBE-SEP-FNO4E6JYD7EGUHTP/,
        );
        const reach = reachability(dir);
        assert.equal(reach.status, 'warn');
        assert.ok(
          !reach.findings.some((f) => f.id === 'clusterip-reachable' && /vm-12-11/.test(f.title)),
        );
        const f = reach.findings.find((x) => x.id === 'clusterip-unreachable')!;
        assert.deepEqual([f.status, f.node], ['warn', 'vm-12-11-centos']);
        assert.deepEqual(
          f.evidence.map((e) => `${e.kind} ${e.text}`),
          [
            'observed vm-12-11-centos: TCP connect 10.1.190.219:8080: connected',
            'observed -t nat -A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-FNO4E6JYD7EGUHTP',
            'computed on vm-12-11-centos, tcp 10.0.12.11 -> 10.1.190.219:8080: 50% DNAT to 10.244.0.3:80, masqueraded; 50% not known: it jumps to KUBE-SEP-FNO4E6JYD7EGUHTP, which the rules read do not hold',
          ],
        );
      },
    ));

  // the IPv6 endpoint chain deleted on vm-12-11-centos, its IPv4 rules whole, both ClusterIPs
  // probed there: the IPv6 answer is the symptom, the IPv4 one still passes on that node
  it('dual-stack: an IPv6 rules failure grades the IPv6 answer only, never the IPv4 pass', () =>
    withCopy(
      'dual-stack-ipv6-rules-missing',
      (nodes) => {
        const [bad, good] = [join(nodes, 'vm-12-11-centos'), join(nodes, 'vm-12-7-centos')];
        copyFileSync(join(good, 'ip6tables-save.txt'), join(bad, 'ip6tables-save.txt'));
        dropChain(join(bad, 'ip6tables-save.txt'), 'KUBE-SEP-76LLUA5Z7VUXHVFR');
        for (const probe of [
          'tcp-connect_10.1.190.219_8080.txt',
          'tcp-connect_fd00:10:96::be_8080.txt',
        ])
          copyFileSync(join(good, probe), join(bad, probe));
      },
      (dir) => {
        const r = kdebug(['svc', '--snapshot', dir, '--no-color'], { env: WIDE });
        assert.equal(r.code, 1, r.stderr);
        assert.match(
          step(r, 'Reachability'),
          /^! IPv6: ClusterIP \[fd00:10:96::be\]:8080: the probe from vm-12-11-centos answered, but its rules do not take 50% of connections to an endpoint$/,
        );
        const reach = reachability(dir);
        const titles = reach.findings.map((f) => `${f.status} ${f.id} ${f.title}`);
        assert.ok(
          titles.includes(
            'pass clusterip-reachable IPv4: ClusterIP 10.1.190.219:8080 answers from vm-12-11-centos and vm-12-7-centos',
          ),
          titles.join('\n'),
        );
        assert.ok(
          titles.includes(
            'pass clusterip-reachable IPv6: ClusterIP [fd00:10:96::be]:8080 answers from vm-12-7-centos',
          ),
          titles.join('\n'),
        );
        const f = reach.findings.find((x) => x.id === 'clusterip-unreachable')!;
        assert.deepEqual(
          [f.status, f.node, f.evidence.map((e) => e.kind)],
          ['warn', 'vm-12-11-centos', ['observed', 'observed', 'computed']],
        );
      },
    ));

  // an endpoint chain deleted in both families on vm-12-11-centos, both ClusterIPs probed there:
  // each family's answer is the symptom of that family's Rules finding, never the node's first
  it("dual-stack, both families failing on a node: each answer cites its own family's Rules finding", () =>
    withCopy(
      'dual-stack-ipv6-rules-missing',
      (nodes) => {
        const [bad, good] = [join(nodes, 'vm-12-11-centos'), join(nodes, 'vm-12-7-centos')];
        copyFileSync(join(good, 'ip6tables-save.txt'), join(bad, 'ip6tables-save.txt'));
        dropChain(join(bad, 'iptables-save.txt'), 'KUBE-SEP-SMDVMBZNJPO5AA7R');
        dropChain(join(bad, 'ip6tables-save.txt'), 'KUBE-SEP-76LLUA5Z7VUXHVFR');
        for (const probe of [
          'tcp-connect_10.1.190.219_8080.txt',
          'tcp-connect_fd00:10:96::be_8080.txt',
        ])
          copyFileSync(join(good, probe), join(bad, probe));
      },
      (dir) => {
        const reach = reachability(dir);
        const symptoms = reach.findings.filter((x) => x.id === 'clusterip-unreachable');
        const cited = (family: string) => {
          const f = symptoms.find((x) => x.title.startsWith(family));
          assert.ok(f, symptoms.map((x) => x.title).join('\n'));
          assert.deepEqual([f.status, f.node], ['warn', 'vm-12-11-centos']);
          // the rule lines of the Rules finding it follows from, as read on the node
          return f.evidence.filter((e) => e.kind === 'observed' && /-j KUBE-SEP-/.test(e.text));
        };
        const v4 = cited('IPv4: ');
        const v6 = cited('IPv6: ');
        assert.ok(v4.length > 0 && v4.every((e) => e.text.includes('KUBE-SEP-SMDVMBZNJPO5AA7R')));
        assert.ok(
          v6.length > 0 && v6.every((e) => e.text.includes('KUBE-SEP-76LLUA5Z7VUXHVFR')),
          v6.map((e) => e.text).join('\n'),
        );
      },
    ));

  // the other endpoint's chain deleted on vm-12-11-centos: its own Pod (nginx-55fc968d9-4pddn, 10.244.1.7) is still
  // masqueraded there, yet half its connections to the Service go nowhere. Hairpin read that
  // node's masquerade only: before, "✓ a Pod reaching itself through the Service is masqueraded"
  it("Hairpin on a node whose rules lose a share: that node's masquerade is Rules' symptom, the other's a pass", () =>
    withCopy(
      'nginx-svc',
      (nodes) =>
        dropChain(join(nodes, 'vm-12-11-centos', 'iptables-save.txt'), 'KUBE-SEP-SMDVMBZNJPO5AA7R'),
      (dir) => {
        const r = kdebug(['svc', '--snapshot', dir, '-o', 'json'], { env: WIDE });
        assert.equal(r.code, 1, r.stderr);
        const hairpin = (JSON.parse(r.stdout) as Doc).steps.find((s) => s.id === 'hairpin')!;
        assert.equal(hairpin.status, 'warn');
        const got = hairpin.findings.map((f) => [f.status, f.node ?? '', f.title]);
        assert.deepEqual(got, [
          [
            'warn',
            'vm-12-11-centos',
            'nginx-55fc968d9-4pddn is masqueraded on vm-12-11-centos, but its rules do not take 50% of connections to 10.1.190.219:8080 to an endpoint',
          ],
          [
            'pass',
            '',
            '1 of 2 endpoints: a Pod reaching itself through the Service is masqueraded',
          ],
        ]);
        const symptom = hairpin.findings[0]!;
        assert.deepEqual(
          symptom.evidence.map((e) => e.kind),
          ['observed', 'observed', 'computed'],
        );
        assert.match(
          symptom.explanation,
          /This follows from jump-target-missing \(Rules\): fix that first\.$/,
        );
      },
    ));
});
