// The parser against the real iptables: rules written the way kube-proxy writes them are loaded
// with iptables-restore in a private network namespace, read back with iptables-save, parsed, and
// printed again; every line must come back byte for byte. Nothing touches the host's own rules.
//
// IP conventions: Pod CIDR 10.244.0.0/16, Service CIDR 10.96.0.0/16, node 192.0.2.10.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { parseIptables, printRule } from '../../src/core/dataplane/iptables/read/parse.js';
import { realIptablesMissing } from '../support/real-iptables.js';
import { skipWithout } from '../support/skip.js';

const PAYLOAD = `*filter
:KUBE-FIREWALL - [0:0]
:KUBE-FORWARD - [0:0]
-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x00004000/0x00004000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "say \\"hi\\"" -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL --limit-iface-in -j ACCEPT
-A KUBE-FORWARD -p udp -m multiport --dports 53,5353:5360 -m state --state NEW -j REJECT
-A KUBE-FORWARD -m statistic --mode nth --every 3 --packet 1 -j LOG --log-prefix "kdebug test: "
COMMIT
*nat
:KUBE-SERVICES - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
:KUBE-SEP-IO5XOSKPAXIFQXAJ - [0:0]
-A KUBE-POSTROUTING -m mark ! --mark 0x00004000/0x00004000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x00004000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --or-mark 0x00004000
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 10.96.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-MARK-MASQ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 10.96.0.41 --dport 80 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.0.5:8080" -m recent --name KUBE-SEP-SXIVWICOYRO3J4NJ --rcheck --seconds 10800 --reap -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.0.5:8080" -m statistic --mode random --probability 0.3333333333 -j KUBE-SEP-SXIVWICOYRO3J4NJ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.1.6:8080" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-IO5XOSKPAXIFQXAJ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.244.1.6:8080" -g KUBE-SEP-IO5XOSKPAXIFQXAJ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.244.0.5 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m recent --name KUBE-SEP-SXIVWICOYRO3J4NJ --set -m tcp -p tcp -j DNAT --to-destination 10.244.0.5:8080
-A KUBE-SEP-IO5XOSKPAXIFQXAJ -m sctp -p sctp --dport 3868 -j DNAT --to-destination 10.244.1.6:3868
-A KUBE-SEP-IO5XOSKPAXIFQXAJ -p udp -m udp ! --sport 1024:2048 -j SNAT --to-source 192.0.2.10
COMMIT
`;

const ns = `kd-parse-${process.pid}`;
const missing = realIptablesMissing();

describe(
  'parser against the real iptables',
  skipWithout(missing && `${missing} (needs root, iproute2 and iptables)`),
  () => {
    let saved = '';
    before(() => {
      execFileSync('ip', ['netns', 'add', ns]);
      execFileSync('ip', ['netns', 'exec', ns, 'iptables-restore'], { input: PAYLOAD });
      saved = execFileSync('ip', ['netns', 'exec', ns, 'iptables-save'], { encoding: 'utf8' });
    });
    after(() => {
      spawnSync('ip', ['netns', 'del', ns]);
    });

    it('prints every rule exactly as iptables-save wrote it', () => {
      const rs = parseIptables(saved, { file: 'iptables-save' });
      const lines = saved.split('\n').filter((l) => l.startsWith('-A '));
      const printed = rs.tables.flatMap((t) => t.chains.flatMap((c) => c.rules.map(printRule)));
      assert.equal(lines.length, 21);
      assert.deepEqual(printed.sort(), [...lines].sort());
    });

    it('reads the payload and the saved text into the same typed rules', () => {
      const payload = parseIptables(PAYLOAD);
      const real = parseIptables(saved);
      for (const table of ['filter', 'nat']) {
        for (const c of payload.table(table)!.chains) {
          const other = real.table(table)!.chain(c.name)!;
          assert.equal(other.ruleCount, c.ruleCount, c.name);
          c.rules.forEach((r, k) => {
            const s = other.rules[k]!;
            assert.deepEqual(
              [s.source, s.destination, s.protocol, s.target?.kind, s.target?.name],
              [r.source, r.destination, r.protocol, r.target?.kind, r.target?.name],
              printRule(r),
            );
          });
        }
      }
    });

    it("reads the quantised probabilities kube-proxy's values become", () => {
      const nat = parseIptables(saved).table('nat')!;
      const svc = nat.chain('KUBE-SVC-XPGD46QRK7WJZT7O')!;
      assert.deepEqual(
        [nat.probability(svc.ruleId(2)), nat.probability(svc.ruleId(3))],
        [0.33333333349, 0.5],
      );
    });
  },
);
