// `ipvsadm -Lnc`, IPVS's connection table (print_conn: pro, expire mm:ss, state, source, virtual,
// destination), pasted alone or after a virtual-server listing and `--timeout`: named as what it
// is, never read as virtual servers nor called iptables' neighbour.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

describe("ipvsadm's connection table", () => {
  it('one grep\'ed row alone is named the connection table (was: "ipvsadm among iptables lines")', () => {
    const text = [
      '$ ipvsadm -lnc |& grep 9153',
      'TCP 00:59  SYN_RECV    10.96.0.10:41282   10.96.0.10:9153    10.244.2.73:9153',
    ].join('\n');
    assert.throws(
      () => readPaste(text, { file: 'p.txt' }),
      (e: Error) =>
        /`ipvsadm -Lnc` output, IPVS's connection table/.test(e.message) &&
        !/iptables lines/.test(e.message),
    );
  });

  it('after a listing and its timeouts: each other listing said apart, by its kind', () => {
    const text = [
      '$ ipvsadm -Ln',
      'IP Virtual Server version 1.2.1 (size=4096)',
      'Prot LocalAddress:Port Scheduler Flags',
      '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
      'TCP  10.254.66.97:8080 rr persistent 10800',
      '  -> 172.20.104.7:8080            Masq    1      0          0',
      '$ ipvsadm -Ln --timeout',
      'Timeout (tcp tcpfin udp): 900 120 300',
      '$ ipvsadm -Lnc',
      'IPVS connection entries',
      'pro expire state       source             virtual            destination',
      'TCP 01:54  TIME_WAIT   192.168.123.248:35672 10.254.66.97:8080  172.20.135.6:8080',
    ].join('\n');
    const x = readPaste(text, { file: 'p.txt' });
    assert.ok(x.mode === 'ipvs');
    assert.deepEqual(x.dump.other, [
      { what: 'timeouts', lines: [8] },
      { what: 'connections', lines: [10, 11, 12] },
    ]);
    const said = rulesText(x.dump, x.trees, { label: 'p' });
    assert.match(said, /line 8: ipvsadm's timeouts/);
    assert.match(said, /lines 10-12: ipvsadm's connection entries \(-c\)/);
  });
});
