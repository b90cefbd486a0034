// IPVS mode as the oldest and newest recorded releases programmed it in the IPVS VM
// (test/fixtures/releases/<minor>/ipvs, node-a, a single-stack cluster on a node with IPv6): a
// rule of kube-proxy's iptables deleted from the node's dump is a drift finding of its chain's
// kind, a table not read is said, not taken as no drift; the hairpin set's own MASQUERADE (first
// in KUBE-POSTROUTING) does not hide --random-fully; expect says the IPv6 proxier runs there and
// prints its KUBE-6-* sets and ip6tables rules with --family ipv6.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { kdebug } from '../support/cli.js';
import { IPVS_NODE } from '../support/ipvs-vm/kube-proxy.js';
import { FIXTURES, recordings } from './record.js';
import { allModes } from '../support/modes.js';

const ipvs = recordings().filter((r) => r.mode === 'ipvs');
const ends = [ipvs[0], ipvs[ipvs.length - 1]].filter((r, i, all) => r && all.indexOf(r) === i);

/** node-a's drift findings and notes (IPv4) once `edit` changed its iptables-save. */
async function driftWith(dir: string, edit: (dump: string) => string) {
  const facts = await readSnapshot(dir);
  const files = facts.nodes[IPVS_NODE]!;
  files['iptables-save'] = edit(files['iptables-save']!);
  const d = new Analysis(facts, { code: allModes }).node(IPVS_NODE).drift();
  return {
    findings: d.findings.map((f) => `${severityOf(f)} ${f.id}: ${f.drift.expected.join(' | ')}`),
    notes: (d.notRead ?? []).map((f) => `${f.id}: ${f.title}`),
    tables: d.tables,
  };
}

describe('IPVS mode on the oldest and newest recorded releases', () => {
  it('has IPVS recordings', () => assert.ok(ends.length > 0, `none in ${FIXTURES}`));
  for (const { release, dir } of ends.map((r) => r!))
    describe(`v1.${release.minor}`, () => {
      it('compares both tables: nothing found as recorded', async () => {
        const d = await driftWith(dir, (s) => s);
        assert.deepEqual(d.findings, []);
        assert.deepEqual(d.tables, ['ipvs', 'kube-ipvs0', 'ipset', 'nat', 'filter']);
      });
      it('a deleted rule is its chain kind of finding, with the rule kube-proxy writes', async () => {
        const d = await driftWith(dir, (s) =>
          s
            .replace(/^-A KUBE-MARK-MASQ .*\n/m, '')
            .replace(/^-A KUBE-IPVS-FILTER -m conntrack .*\n/m, '')
            .replace(/^-A PREROUTING .*KUBE-SERVICES\n/m, ''),
        );
        assert.deepEqual(d.findings.sort(), [
          'error entry-jump-missing: -t nat -A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
          'warning firewall-missing: -t filter -A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set KUBE-IPVS-IPS dst -j REJECT --reject-with icmp-port-unreachable',
          'warning masquerade-missing: -t nat -A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
        ]);
      });
      it('a dump without its filter table: the nat table compared, the filter table said not to be', async () => {
        const d = await driftWith(dir, (s) => s.replace(/^\*filter\n[\s\S]*?^COMMIT\n/m, ''));
        assert.deepEqual(d.findings, []);
        assert.deepEqual(d.tables, ['ipvs', 'kube-ipvs0', 'ipset', 'nat']);
        assert.deepEqual(d.notes, ["table-not-captured: kube-proxy's filter table not compared"]);
      });
      it('expect: the IPv4 proxier says the IPv6 one runs too; --family ipv6 prints its sets and rules', () => {
        const v4 = kdebug(['expect', '--snapshot', dir, '--node', IPVS_NODE]);
        assert.equal(v4.code, 0, v4.stderr);
        assert.match(
          v4.stdout,
          /^# note: the node has IPv6, so kube-proxy runs its IPv6 proxier here too/m,
        );
        assert.doesNotMatch(v4.stdout, /^create KUBE-6-/m);
        const v6 = kdebug(['expect', '--snapshot', dir, '--node', IPVS_NODE, '--family', 'ipv6']);
        assert.equal(v6.code, 0, v6.stderr);
        assert.match(
          v6.stdout,
          /^create KUBE-6-CLUSTER-IP hash:ip,port family inet6 hashsize 1024 maxelem 65536$/m,
        );
        assert.match(v6.stdout, /^-A KUBE-SERVICES -s ::1\/128 -j RETURN$/m);
        assert.doesNotMatch(v6.stdout, /IPv6 proxier here too/);
      });
      it("reads --random-fully off the marked-traffic MASQUERADE, not the hairpin set's", async () => {
        const facts = await readSnapshot(dir);
        const dump = facts.nodes[IPVS_NODE]!['iptables-save']!;
        assert.match(dump, /KUBE-LOOP-BACK dst,dst,src -j MASQUERADE\n/);
        assert.equal(
          optionsFromDump(parseIptables(dump, { file: join(dir, 'x') })).randomFully,
          true,
        );
      });
    });
});
