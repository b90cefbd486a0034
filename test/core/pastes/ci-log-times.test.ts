// A CI job's log puts its runner's time before each line (GitHub Actions' ISO 8601 UTC time,
// Jenkins' time of day): every reader reads the listing without it, and says so; times before
// prose alone are no listing's, and nothing is read off them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const text = (input: string) => {
  const got = readPaste(input, { file: 'ci.log' });
  assert.ok(got.mode !== 'not-kube-proxy');
  return { got, said: rulesText(got.dump, got.trees, { label: 'paste' }) };
};

describe("a CI log's times before each line", () => {
  it("GitHub Actions' ISO times before an iptables-save: the rules read, the times said", () => {
    const stamp = (s: string, k: number) =>
      `2024-05-24T16:10:55.${String(k).padStart(7, '0')}Z   ${s}`;
    const { got, said } = text(
      [
        '*nat',
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]',
        ':KUBE-SEP-AAAAAAAAAAAAAAAA - [0:0]',
        '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m comment --comment "kube-system/kube-dns:dns cluster IP" -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU',
        '-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "kube-system/kube-dns:dns -> 10.244.0.3:53" -j KUBE-SEP-AAAAAAAAAAAAAAAA',
        '-A KUBE-SEP-AAAAAAAAAAAAAAAA -p udp -m comment --comment "kube-system/kube-dns:dns" -m udp -j DNAT --to-destination 10.244.0.3:53',
        'COMMIT',
      ]
        .map(stamp)
        .join('\n') + '\n',
    );
    assert.equal(got.mode, 'iptables');
    const dns = got.trees.services.find((t) => t.name === 'kube-system/kube-dns:dns');
    assert.deepEqual(
      dns?.endpoints.map((e) => e.address),
      ['10.244.0.3:53'],
      said,
    );
    assert.match(
      said,
      /lines 1-8 carry a CI log's time before each \("2024-05-24T16:10:55\.0000000Z"/,
    );
  });

  it("Jenkins' time of day before an ipvsadm listing: read as IPVS, the times said", () => {
    const { got, said } = text(
      [
        '09:12:01 IP Virtual Server version 1.2.1 (size=4096)',
        '09:12:01 Prot LocalAddress:Port Scheduler Flags',
        '09:12:01   -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
        '09:12:01 TCP  10.96.0.1:443 rr',
        '09:12:01   -> 192.168.0.10:6443            Masq    1      0          0',
      ].join('\n') + '\n',
    );
    assert.equal(got.mode, 'ipvs');
    assert.deepEqual(
      got.trees.services.flatMap((t) => t.endpoints.map((e) => e.address)),
      ['192.168.0.10:6443'],
    );
    assert.match(said, /carry a CI log's time before each \("09:12:01"/);
  });

  it('times before prose alone are not read off: the paste is not a listing', () => {
    assert.throws(
      () =>
        readPaste('12:01:02 alice: the service is down\n12:01:09 bob: which one?\n', {
          file: 'chat.txt',
        }),
      (e: Error) => !/CI log/.test(e.message),
    );
  });
});
