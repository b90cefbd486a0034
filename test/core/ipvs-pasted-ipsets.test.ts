// `ipset list` (plain form) pasted beside `ipvsadm -Ln`: kube-proxy's KUBE-LOOP-BACK set
// (hash:ip,port,ip: endpoint, proto:port, endpoint) says which real servers are masqueraded when
// they reach themselves. Read for the hairpin; the set lines named, not called prose.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

const IPSET = [
  'Name: KUBE-LOOP-BACK',
  'Type: hash:ip,port,ip',
  'Revision: 5',
  'Header: family inet hashsize 1024 maxelem 65536',
  'Size in memory: 896',
  'References: 1',
  'Number of entries: 1',
  'Members:',
  '10.244.1.5,tcp:8080,10.244.1.5',
  '',
];
const IPVS = [
  'IP Virtual Server version 1.2.1 (size=4096)',
  'Prot LocalAddress:Port Scheduler Flags',
  '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
  'TCP  10.96.0.50:80 rr',
  '  -> 10.244.1.5:8080              Masq    1      0          0',
  '  -> 10.244.2.6:8080              Masq    1      0          0',
];

describe('ipset list beside ipvsadm -Ln', () => {
  it("reads KUBE-LOOP-BACK for each real server's hairpin, and names the set lines", () => {
    const x = readPaste([...IPSET, ...IPVS].join('\n'), { file: 'p.txt' });
    assert.ok(x.mode === 'ipvs');
    const eps = x.trees.services[0]!.endpoints;
    assert.deepEqual(
      eps.map((e) => [e.address, e.hairpinMasquerade]),
      [
        ['10.244.1.5:8080', true],
        ['10.244.2.6:8080', null],
      ],
    );
    assert.ok(!x.dump.skipped.some((n) => n <= 9));
    assert.match(
      rulesText(x.dump, x.trees, { label: 'p' }),
      /lines 1-9: `ipset list` output \(KUBE-LOOP-BACK\)/,
    );
  });

  it('without the set, the hairpin stays unknown', () => {
    const x = readPaste(IPVS.join('\n'), { file: 'p.txt' });
    assert.ok(x.mode === 'ipvs');
    assert.ok(x.trees.services[0]!.endpoints.every((e) => e.hairpinMasquerade === null));
  });
});
