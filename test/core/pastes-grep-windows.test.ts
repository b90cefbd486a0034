// grep's context output pasted (`iptables -t nat -S | grep -A 1 KUBE-SVC-…`): GNU grep prints each
// match with the lines its window holds around it and a "--" line between groups apart. A "--" is
// an elision already; the edges of the output are not marked, yet the last group may end where a
// window did (and, with -B or -C, the first start where one did). Each output below is what GNU
// grep 3.8 printed of one kube-proxy v1.29 `iptables -t nat -S` (every chain declared with -N first,
// then every rule) for kube-dns and kubernetes.
// IP conventions: Pods 10.244.0.0/16, Service CIDR 10.96.0.0/16, node 192.168.0.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import type { ServiceTree } from '../../src/core/dataplane/trees.js';
import { rulesText } from '../../src/output/rules.js';

const reads = (text: string) => {
  const x = readPaste(text, { file: 'p.txt' });
  assert.ok(x.mode === 'iptables');
  const all = [...x.trees.services, ...x.trees.orphans.flatMap((o) => (o.tree ? [o.tree] : []))];
  const tree = (name: string): ServiceTree => all.find((t) => t.name === name)!;
  const warned = x.dump.warnings.filter((w) => /grep's window/.test(w.message));
  return { x, tree, warned, text: rulesText(x.dump, x.trees, { label: 'p' }) };
};

/** `grep -A 1 KUBE-SVC-NPX46M4PTMTKRN6Y`: its last group holds the match and the line after it,
 * kube-dns's first rule, its other rules past the window. */
const AFTER_1 = `-N KUBE-SVC-NPX46M4PTMTKRN6Y
-N KUBE-SVC-TCOU7JCQXEZGVUNU
--
-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
--
-A KUBE-SVC-NPX46M4PTMTKRN6Y ! -s 10.244.0.0/16 -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-MARK-MASQ
-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> 192.168.0.10:6443" -j KUBE-SEP-ZXMNUKOKXUTL2MK2
-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
`;

describe("grep -A/-B/-C output: the chain grep's window may cut claims nothing past it", () => {
  it('the last group, its window size not in the paste: its last chain may go on past it', () => {
    const { tree, warned, text } = reads(AFTER_1);
    const dns = tree('kube-system/kube-dns:dns');
    assert.match(dns.partial ?? '', /grep's window .*size is not in the paste.* at line 9/);
    assert.deepEqual(dns.endpoints, []);
    assert.doesNotMatch(text, /no endpoints|match none of the endpoint rules/);
    assert.deepEqual(
      warned.map((w) => [w.line, w.kind]),
      [[9, 'elided']],
    );
    // a last group that ends at its table's COMMIT ends its chain there
    const committed = reads(`*nat
:KUBE-SVC-NPX46M4PTMTKRN6Y - [0:0]
--
-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> 192.168.0.10:6443" -j KUBE-SEP-ZXMNUKOKXUTL2MK2
COMMIT
`);
    assert.deepEqual(committed.warned, []);
  });

  it('typed with its -A above the output: said with the window it typed', () => {
    const typed = `$ iptables -t nat -S | grep -A 1 KUBE-SVC-NPX46M4PTMTKRN6Y\n${AFTER_1}`;
    const { tree, text } = reads(typed);
    assert.match(
      tree('kube-system/kube-dns:dns').partial ?? '',
      /grep's window \(-A 1, typed at line 1\) may end inside it, at line 10/,
    );
    assert.doesNotMatch(text, /no endpoints/);
    // --after-context=1 and -A1 alike
    for (const option of ['--after-context=1', '-A1', '-nA 1'])
      assert.match(
        reads(typed.replace('-A 1', option)).tree('kube-system/kube-dns:dns').partial ?? '',
        /-A 1, typed/,
        option,
      );
  });

  it('a last group shorter than the window typed ended with the input: nothing said of a window there', () => {
    // `grep -B 1 -A 3 -e "dns -> 10.244.0.3:53" -e "KUBE-SERVICES -d 10.96.0.1/32"`: the first
    // group is a whole window (1 + 1 + 3 lines), the last holds 2, the input's end
    const { x, warned } =
      reads(`$ iptables -t nat -S | grep -B 1 -A 3 -e "dns -> 10.244.0.3:53" -e "KUBE-SERVICES -d 10.96.0.1/32"
-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:metrics cluster IP" -m tcp --dport 9153 -j KUBE-SVC-JD5MR3NA4I4DYORP
-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-SVC-ERIFXISQEP7F7OF4 ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p tcp -m comment --comment "kube-system/kube-dns:dns-tcp cluster IP" -m tcp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-ERIFXISQEP7F7OF4 -m comment --comment "kube-system/kube-dns:dns-tcp -> 10.244.0.2:53" -j KUBE-SEP-IT2ZTR26TO4XFPTO
--
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-YIL6JZP7A3QYXJU2
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -j KUBE-SEP-ZP3FB6NMPNCO4VBJ
`);
    // the first group's window starts inside KUBE-SERVICES: its rules above are not in the paste
    assert.deepEqual(
      warned.map((w) => [w.line, /may start/.test(w.message)]),
      [[2, true]],
    );
    const nat = x.dump.tables.find((t) => t.name === 'nat')!;
    assert.match(nat.partial.get('KUBE-SERVICES') ?? '', /-B 1 -A 3, typed at line 1\) may start/);
    assert.doesNotMatch(nat.partial.get('KUBE-SVC-TCOU7JCQXEZGVUNU') ?? '', /window/);
  });

  it('a command after grep that may drop lines (`| head`): a short last group may be its doing, said', () => {
    // the last group holds 3 lines of a window of 6: the input's end, unless head cut it
    const typed = (then: string) =>
      `$ iptables -t nat -S | grep -A 5 KUBE-SVC-NPX46M4PTMTKRN6Y${then}\n${AFTER_1}`;
    assert.doesNotMatch(reads(typed('')).tree('kube-system/kube-dns:dns').partial ?? '', /window/);
    assert.match(
      reads(typed(' | head -n 10')).tree('kube-system/kube-dns:dns').partial ?? '',
      /grep's window \(-A 5, typed at line 1; `head` after grep in the pipe may drop lines\) may end inside it, at line 10/,
    );
  });

  it('a command before grep that may drop lines (`head |`): a short last group may be its doing, said', () => {
    const typed = `$ iptables -t nat -S | head -n 40 | grep -A 5 KUBE-SVC-NPX46M4PTMTKRN6Y\n${AFTER_1}`;
    assert.match(
      reads(typed).tree('kube-system/kube-dns:dns').partial ?? '',
      /grep's window \(-A 5, typed at line 1; `head` before grep in the pipe may drop lines\) may end inside it, at line 10/,
    );
  });

  it("-B: the window that starts the output may start inside a chain, its endpoints' shares unknown", () => {
    // `grep -B 2 "dns -> 10.244.0.2:53"`: one group, its first line kubernetes's last rule
    const { tree } = reads(`# iptables -t nat -S | grep -B 2 "dns -> 10.244.0.2:53"
-A KUBE-SVC-NPX46M4PTMTKRN6Y -m comment --comment "default/kubernetes:https -> 192.168.0.10:6443" -j KUBE-SEP-ZXMNUKOKXUTL2MK2
-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-MARK-MASQ
-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-YIL6JZP7A3QYXJU2
`);
    const https = tree('default/kubernetes:https');
    assert.match(https.partial ?? '', /\(-B 2, typed at line 1\) may start inside it, at line 2/);
    assert.deepEqual(
      https.endpoints.map((e) => [e.address, e.shareUnknown !== undefined]),
      [['192.168.0.10:6443', true]],
    );
  });
});

describe("what ends grep's output", () => {
  it('a line of prose after it ends it (its last line is where a window may end); a "#" note among its rules does not', () => {
    const typed = '$ iptables -t nat -S | grep -A 1 KUBE-SVC-NPX46M4PTMTKRN6Y\n';
    const more =
      '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.2:53" -j KUBE-SEP-YIL6JZP7A3QYXJU2\n';
    const ends = (between: string) =>
      reads(typed + AFTER_1 + between + more).warned.map((w) => w.line);
    assert.deepEqual(ends('and that is all it printed\n'), [10]);
    assert.deepEqual(ends('# and that is all it printed\n'), [12]);
  });
});
