// IPVS mode as the oldest and newest recorded releases programmed it in the IPVS VM
// (test/fixtures/releases/<minor>/ipvs, node-a, a single-stack cluster on a node with IPv6): the
// hairpin set's own MASQUERADE (first in KUBE-POSTROUTING) does not hide --random-fully; expect
// says the IPv6 proxier runs there and prints its KUBE-6-* sets and ip6tables rules with
// --family ipv6.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { kdebug } from '../support/cli.js';
import { IPVS_NODE } from '../support/ipvs-vm/kube-proxy.js';
import { FIXTURES, recordings } from './record.js';

const ipvs = recordings().filter((r) => r.mode === 'ipvs');
const ends = [ipvs[0], ipvs[ipvs.length - 1]].filter((r, i, all) => r && all.indexOf(r) === i);

describe('IPVS mode on the oldest and newest recorded releases', () => {
  it('has IPVS recordings', () => assert.ok(ends.length > 0, `none in ${FIXTURES}`));
  for (const { release, dir } of ends.map((r) => r!))
    describe(`v1.${release.minor}`, () => {
      it('expect: the IPv4 proxier says the IPv6 one runs too; --family ipv6 prints its sets and rules', () => {
        const v4 = kdebug(['expect', '--snapshot', dir, '--node', IPVS_NODE]);
        assert.equal(v4.code, 0, v4.stderr);
        assert.match(
          v4.stdout,
          /^# the node has IPv6, so kube-proxy runs its IPv6 proxier here too/m,
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
