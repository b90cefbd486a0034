// What a node shows of itself pasted with (or instead of) its rules: `ps` rows (procps' aux and
// -ef layouts) and the kernel's settings read from /sys or /proc (a cat, a shell loop over sysfs
// files, sysctl) with what they printed. Each is named as what it is, never read as rules nor
// called prose; the paste is named by one of them only where it is most of it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { NoRulesError } from '../../../src/core/dataplane/iptables/read/parse.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const refusal = (text: string) => {
  try {
    readPaste(text, { file: 'p.txt' });
  } catch (e) {
    assert.ok(e instanceof NoRulesError, (e as Error).message);
    return e;
  }
  assert.fail('read');
};

const PS_AUX = [
  'USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND',
  'root       13400  2.3  0.3 2164100 113824 ?      Ssl  09:25   0:17 /usr/bin/kubelet --node-ip=10.0.2.15',
  'root        2210  0.1  0.2 750000 40000 ?        Ssl  09:25   0:03 /usr/local/bin/kube-proxy --config=/var/lib/kube-proxy/config.conf',
];
const PS_EF =
  'root      2210  2180  0 09:25 ?        00:00:17 /usr/local/bin/kube-proxy --config=/var/lib/kube-proxy/config.conf';
const RULES = [
  '-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
  '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "default/web:http -> 10.244.1.5:8080" -j KUBE-SEP-BBBBBBBBBBBBBBBB',
  '-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.1.5:8080',
];

describe("a node's own views beside its rules", () => {
  it('`ps aux` alone: a process listing, named so', () => {
    const e = refusal(`${PS_AUX.join('\n')}\n`);
    assert.equal(e.foreign, 'process-listing');
    assert.match(e.message, /this is a process listing \(`ps`\)/);
  });

  it('sysctl and its output alone: the kernel settings, named so', () => {
    const e = refusal(
      '$ sysctl net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables\nnet.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables = 1\n',
    );
    assert.equal(e.foreign, 'sysfs');
  });

  it('a `ps -ef` row and a /proc read among rules: the rules read, each named by its lines', () => {
    const got = readPaste(
      [PS_EF, '$ cat /proc/sys/net/ipv4/ip_forward', '1', ...RULES, ''].join('\n'),
      { file: 'p.txt' },
    );
    assert.ok(got.mode === 'iptables');
    const t = got.trees.services.find((s) => s.name === 'default/web:http');
    assert.deepEqual(
      t?.endpoints.map((e) => e.address),
      ['10.244.1.5:8080'],
    );
    const said = got.dump.warnings.map((w) => w.message).join('\n');
    assert.match(said, /line 1 not read: this is a process listing/);
    assert.match(
      said,
      /lines 2, 3 not read: these are the kernel's settings read from \/sys or \/proc/,
    );
  });

  it("minikube 13370's paste: the ps row and the sysfs loop's lines named beside the kubelet's log", () => {
    const file =
      'test/fixtures/pastes/minikube-13370-ps-kubelet-journal-hairpin-lines-sysfs-cat-hostname.txt';
    const e = refusal(readFileSync(file, 'utf8'));
    assert.equal(e.foreign, undefined, 'no one kind is most of it');
    assert.match(e.message, /line 2 is a process listing/);
    assert.match(e.message, /lines 6, 7 are the kubelet's log/);
    assert.match(
      e.message,
      /lines 12, 13, 14, 15, 16, 17, 18 are the kernel's settings read from \/sys or \/proc/,
    );
  });

  it('prose that names /proc is not a read of it', () => {
    const got = readPaste(
      ['I checked /proc/sys/net/ipv4/ip_forward and it is 1', ...RULES, ''].join('\n'),
      {
        file: 'p.txt',
      },
    );
    assert.ok(got.mode === 'iptables');
    assert.doesNotMatch(rulesText(got.dump, got.trees, { label: 'paste' }), /kernel's settings/);
  });
});
