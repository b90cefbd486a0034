// `cilium bpf lb list -o json`'s map as cilium-cli's local-redirect-policy test prints it in its
// failure (lrp.go: "frontend [%s] not found in BPF LB map [%+v]"): Go's %+v of a map[string][]string,
// keys sorted, each entry the table's second column as bpf_lb_list.go writes it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

// 1.17's entries (a protocol on each), an IPv6 frontend, one of internal scope
const WHOLE =
  '  🟥 Failed to ensure local redirect BPF entries: %w timeout while waiting for condition, last error: ' +
  'frontend [169.254.169.255:80] not found in BPF LB map [map[' +
  '10.96.0.10:53/UDP:[10.244.1.5:53/UDP (7) (1) 0.0.0.0:0 (7) (0) [ClusterIP, non-routable] ] ' +
  '10.96.0.1:443/TCP:[0.0.0.0:0 (1) (0) [ClusterIP, non-routable]  172.18.0.2:6443/TCP (1) (1)] ' +
  '172.18.0.3:30080/TCP/i:[0.0.0.0:0 (12) (0) [NodePort, Local, InternalLocal]  10.244.1.9:8080/TCP (12) (1)] ' +
  '[fd00::10]:53/UDP:[[::]:0 (9) (0) [ClusterIP, non-routable]  [fd00:10:244::5]:53/UDP (9) (1)]]]\n';

const read = (text: string) =>
  parseCilium(text, 'p.txt').frontends.map(
    (f) =>
      `${f.ip}:${f.port}/${f.protocol}${f.internal ? '/i' : ''} ${f.type} ${f.backends.map((b) => `${b.ip}:${b.port}`).join(',')}`,
  );

describe("cilium-cli's message of the BPF LB map (Go's %+v)", () => {
  it('is read as bpf lb list: each frontend, its type from its slot 0 entry, its backends', () => {
    assert.deepEqual(read(WHOLE), [
      '10.96.0.10:53/udp ClusterIP 10.244.1.5:53',
      '10.96.0.1:443/tcp ClusterIP 172.18.0.2:6443',
      '172.18.0.3:30080/tcp/i NodePort 10.244.1.9:8080',
      'fd00::10:53/udp ClusterIP fd00:10:244::5:53',
    ]);
    assert.equal(parseCilium(WHOLE, 'p.txt').cut, undefined);
  });

  it('says the text after the map not read, at its line', () => {
    const t = parseCilium(
      `${WHOLE}\nThe LRP pods were running; kube-proxy replacement is on.\n`,
      'p.txt',
    );
    assert.equal(read(WHOLE).length, 4);
    assert.deepEqual(
      (t.notRead ?? []).map((n) => n.line),
      [3],
    );
    assert.match(t.notRead![0]!.reason, /after .*not read: "The LRP pods were running/);
    assert.equal(parseCilium(WHOLE, 'p.txt').notRead, undefined);
  });

  it("is told as Cilium's, not refused as iptables rules, where the paste starts inside it", () => {
    const tail = WHOLE.slice(WHOLE.indexOf('10.96.0.1:443/TCP:['));
    const r = readPaste(tail, { file: 'p.txt' });
    assert.equal(r.mode, 'cilium');
    const t = parseCilium(tail, 'p.txt');
    assert.match(t.cut![0]!.reason, /starts inside .*frontends before 10\.96\.0\.1:443\/TCP/);
    assert.equal(t.frontends.length, 3);
  });

  it('wrapped by the paste inside an entry, reads across the wrap; cut inside one, says so', () => {
    const at = WHOLE.indexOf('(1) (0) [ClusterIP');
    const wrapped = `${WHOLE.slice(0, at + 6)}\n${WHOLE.slice(at + 6, WHOLE.indexOf('[fd00::10]') + 20)}`;
    assert.deepEqual(read(wrapped).slice(0, 3), read(WHOLE).slice(0, 3));
    const t = parseCilium(wrapped, 'p.txt');
    assert.equal(t.frontends.length, 3);
    assert.match(t.cut![0]!.reason, /ends inside .*entries of \[fd00::10\]:53\/UDP/);
    assert.equal(t.cut![0]!.line, 2);
  });

  it('reads a port as printed where the key is "/ANY" (cut at its slot, not the 2021 printer)', () => {
    // 1.17+ prints a protocol-ANY Service "ADDR:PORT/ANY (slot)": cilium-cli cuts the slot
    // off, and the key is left as the 2021 printer's network-order form looked; its port is
    // converted all the same (the local-redirect-policy test came years after that printer)
    const any =
      'frontend [169.254.169.255:80] not found in BPF LB map [map[' +
      '10.96.0.10:53/ANY:[10.244.1.5:53/ANY (7) (1) 0.0.0.0:0 (7) (0) [ClusterIP, non-routable] ] ' +
      '10.96.0.1:443/ANY:[0.0.0.0:0 (1) (0) [ClusterIP, non-routable]  172.18.0.2:6443/ANY (1) (1)]]]\n';
    const t = parseCilium(any, 'p.txt');
    assert.deepEqual(
      t.frontends.map((f) => `${f.ip}:${f.port}`),
      ['10.96.0.10:53', '10.96.0.1:443'],
    );
    assert.equal(t.portsSwapped, undefined);
  });
});
