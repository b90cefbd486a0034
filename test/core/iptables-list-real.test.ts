// `iptables -L` read as the rules it lists, checked against the real iptables: kube-proxy's own
// expected nat payload of each release we model (pkg/proxy/iptables TestOverallIPTablesRules,
// test/fixtures/releases/NN) is loaded with iptables-restore in a private network namespace, in
// each backend; its -L views (-n -v, -n --line-numbers, -n -v -x, without -n) must give the
// same Service trees as its iptables-save; an IPv6 Service through ip6tables the same. The
// payload's nfacct matches are dropped: this kernel has no nfacct, and they play no part in a
// Service's tree. Nothing touches the host's rules.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { type ServiceTree } from '../../src/core/dataplane/trees.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';
import { realIptablesMissing } from '../support/real-iptables.js';
import { skipWithout } from '../support/skip.js';

const RELEASES = 'test/fixtures/releases';
const releases = readdirSync(RELEASES).filter((r) => /^\d+$/.test(r));
const missing = realIptablesMissing();
const ns = `kd-list-${process.pid}`;
const run = (...argv: string[]) =>
  execFileSync('ip', ['netns', 'exec', ns, ...argv], { encoding: 'utf8' });

/** What a tree says, as compared: names, entries, endpoints and shares, affinity, masquerade. */
function said(t: ServiceTree) {
  const eps = (list: ServiceTree['endpoints']) =>
    list.map((e) => [e.address, Math.round(e.probability * 1e6) / 1e6, !!e.affinity]);
  return {
    name: t.name,
    clusterIP: t.clusterIP,
    port: t.port,
    protocol: t.protocol,
    nodePorts: t.nodePorts,
    entries: t.entries.map((e) => [e.kind, e.address, e.port, e.protocol]),
    endpoints: eps(t.endpoints),
    local: eps(t.localEndpoints ?? []),
    affinity: t.affinitySeconds,
    masquerade: t.masquerade.map((m) => m.condition),
    drops: t.verdicts.length,
  };
}

const treesOf = (text: string) =>
  buildServiceTrees(parseIptables(text, { file: 'paste' })).services.map(said);

describe(
  'iptables -L read against the real iptables, per release',
  skipWithout(missing && `${missing} (needs root, iproute2 and iptables)`),
  () => {
    before(() => execFileSync('ip', ['netns', 'add', ns]));
    after(() => spawnSync('ip', ['netns', 'del', ns]));

    it('session affinity, a UDP and an SCTP port: -L -n -v gives the trees of iptables-save', () => {
      // Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16, as kube-proxy writes ClientIP affinity
      const nat = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
:KUBE-SEP-IO5XOSKPAXIFQXAJ - [0:0]
:KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]
:KUBE-SEP-AAAAAAAAAAAAAAAA - [0:0]
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-SERVICES -d 10.96.0.41/32 -p tcp -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU
-A KUBE-SVC-XPGD46QRK7WJZT7O ! -s 10.244.0.0/16 -d 10.96.0.41/32 -p tcp -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.0.5:8080" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-SXIVWICOYRO3J4NJ --mask 255.255.255.255 --rsource -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.1.6:8080" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-IO5XOSKPAXIFQXAJ --mask 255.255.255.255 --rsource -j KUBE-SEP-IO5XOSKPAXIFQXAJ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.0.5:8080" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.1.6:8080" -j KUBE-SEP-IO5XOSKPAXIFQXAJ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -s 10.244.0.5/32 -m comment --comment "ns1/svc1:p80" -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -p tcp -m comment --comment "ns1/svc1:p80" -m recent --set --name KUBE-SEP-SXIVWICOYRO3J4NJ --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.244.0.5:8080
-A KUBE-SEP-IO5XOSKPAXIFQXAJ -s 10.244.1.6/32 -m comment --comment "ns1/svc1:p80" -j KUBE-MARK-MASQ
-A KUBE-SEP-IO5XOSKPAXIFQXAJ -p tcp -m comment --comment "ns1/svc1:p80" -m recent --set --name KUBE-SEP-IO5XOSKPAXIFQXAJ --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.244.1.6:8080
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-AAAAAAAAAAAAAAAA
-A KUBE-SEP-AAAAAAAAAAAAAAAA -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.2:53
COMMIT
`;
      execFileSync('ip', ['netns', 'exec', ns, 'iptables-restore'], { input: nat });
      const saved = treesOf(run('iptables-save', '-t', 'nat'));
      const listed = treesOf(run('iptables', '-t', 'nat', '-L', '-n', '-v'));
      assert.deepEqual(listed, saved);
      const svc = listed.find((t) => t.name === 'ns1/svc1:p80')!;
      assert.equal(svc.affinity, 10800);
      assert.deepEqual(svc.endpoints, [
        ['10.244.0.5:8080', 0.5, true],
        ['10.244.1.6:8080', 0.5, true],
      ]);
      run('iptables', '-t', 'nat', '-F');
      run('iptables', '-t', 'nat', '-X');
    });

    for (const backend of ['nft', 'legacy'])
      it(`ip6tables-${backend}: an IPv6 Service's -L views give the trees of ip6tables-save`, () => {
        // Service CIDR fd00:10:96::/112, Pods fd00:10:244::/56, as kube-proxy writes them
        const nat = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-NPX46M4PTMTKRN6Y - [0:0]
:KUBE-SEP-BBBBBBBBBBBBBBBB - [0:0]
:KUBE-SEP-CCCCCCCCCCCCCCCC - [0:0]
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-SERVICES -d fd00:10:96::1/128 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y
-A KUBE-SVC-NPX46M4PTMTKRN6Y ! -s fd00:10:244::/56 -d fd00:10:96::1/128 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-MARK-MASQ
-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> [fc00:f853:ccd:e793::3]:6443" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BBBBBBBBBBBBBBBB
-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> [fc00:f853:ccd:e793::4]:6443" -j KUBE-SEP-CCCCCCCCCCCCCCCC
-A KUBE-SEP-BBBBBBBBBBBBBBBB -s fc00:f853:ccd:e793::3/128 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ
-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination [fc00:f853:ccd:e793::3]:6443
-A KUBE-SEP-CCCCCCCCCCCCCCCC -s fc00:f853:ccd:e793::4/128 -m comment --comment "default/kubernetes:https" -j KUBE-MARK-MASQ
-A KUBE-SEP-CCCCCCCCCCCCCCCC -p tcp -m comment --comment "default/kubernetes:https" -m tcp -j DNAT --to-destination [fc00:f853:ccd:e793::4]:6443
COMMIT
`;
        execFileSync('ip', ['netns', 'exec', ns, `ip6tables-${backend}-restore`], { input: nat });
        const saved = treesOf(run(`ip6tables-${backend}-save`, '-t', 'nat'));
        assert.equal(saved[0]?.clusterIP, 'fd00:10:96::1');
        for (const view of [['-n', '-v'], ['-n']])
          assert.deepEqual(
            treesOf(run(`ip6tables-${backend}`, '-t', 'nat', '-L', ...view)),
            saved,
            view.join(' '),
          );
        run(`ip6tables-${backend}`, '-t', 'nat', '-F');
        run(`ip6tables-${backend}`, '-t', 'nat', '-X');
      });

    for (const release of releases)
      for (const backend of ['nft', 'legacy'])
        it(`kube-proxy 1.${release}, iptables-${backend}: every -L view gives the trees of iptables-save`, () => {
          const payload = readFileSync(`${RELEASES}/${release}/iptables-overall.txt`, 'utf8');
          const nat = /^\*nat\n[\s\S]*?^COMMIT$/m
            .exec(payload)![0]
            .replace(/ -m nfacct --nfacct-name \S+/g, '');
          execFileSync('ip', ['netns', 'exec', ns, `iptables-${backend}-restore`], {
            input: `${nat}\n`,
          });
          const saved = treesOf(run(`iptables-${backend}-save`, '-t', 'nat'));
          assert.ok(saved.length >= 5, `${saved.length} Service ports in the payload`);
          for (const view of [
            ['-n', '-v'],
            ['-n', '--line-numbers'],
            ['-n', '-v', '-x'],
          ]) {
            const listed = run(`iptables-${backend}`, '-t', 'nat', '-L', ...view);
            assert.deepEqual(treesOf(listed), saved, view.join(' '));
          }
          // names, not numbers: this namespace resolves none, so each address prints as itself,
          // ports by their /etc/services names, and with -v "any" for no interface
          for (const view of [[], ['-v']]) {
            const named = run(`iptables-${backend}`, '-t', 'nat', '-L', ...view);
            assert.deepEqual(treesOf(named), saved, `without -n ${view.join(' ')}`);
          }
          run(`iptables-${backend}`, '-t', 'nat', '-F');
          run(`iptables-${backend}`, '-t', 'nat', '-X');
        });
  },
);
