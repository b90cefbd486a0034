// ipvsadm commands typed (a prompt before them) read as ipvsadm's process_options sends them: a
// real server's forwarding is -g (direct routing) where none is given, its weight 1, and with -g
// or -i its port is the virtual service's; an edit sends every field anew. A saved row
// (ipvsadm-save prints every flag) without its forwarding is cut, never given the default.
// Addresses: VIP 192.0.2.80 (documentation range), real servers 198.51.100.0/24.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';

const VS = '# ipvsadm -A -t 192.0.2.80:80 -s rr\n';
const rows = (text: string) =>
  parseIpvs(text).services[0]!.realServers.map((r) => `${r.address} ${r.forward} ${r.weight}`);

describe('IPVS: typed ipvsadm commands take ipvsadm defaults', () => {
  const cases: [string, string, string[]][] = [
    [
      'no forwarding flag: -g',
      '# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:80',
      ['198.51.100.1:80 Route 1'],
    ],
    [
      '-g: the service port',
      '# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:8080 -g -w 2',
      ['198.51.100.1:80 Route 2'],
    ],
    [
      'no flag: the service port too',
      '# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:8080',
      ['198.51.100.1:80 Route 1'],
    ],
    [
      '-i: the service port',
      '# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:8080 -i',
      ['198.51.100.1:80 Tunnel 1'],
    ],
    [
      '-m keeps its own port',
      '# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:8080 -m',
      ['198.51.100.1:8080 Masq 1'],
    ],
  ];
  for (const [name, line, want] of cases)
    it(name, () => assert.deepEqual(rows(`${VS}${line}\n`), want));

  it('an edit sends every field: -e without -m or -w is -g at weight 1', () => {
    const text = `${VS}# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:80 -m -w 3\n# ipvsadm -e -t 192.0.2.80:80 -r 198.51.100.1:80\n`;
    assert.deepEqual(rows(text), ['198.51.100.1:80 Route 1']);
  });

  it('a firewall-mark service: -g keeps the real server its own port', () => {
    const t = parseIpvs('# ipvsadm -A -f 7 -s rr\n# ipvsadm -a -f 7 -r 198.51.100.1:8080 -g\n');
    assert.deepEqual(
      t.services[0]!.realServers.map((r) => `${r.address} ${r.forward}`),
      ['198.51.100.1:8080 Route'],
    );
  });

  it('a saved row without its forwarding is cut, not read as -g', () => {
    const t = parseIpvs('-A -t 192.0.2.80:80 -s rr\n-a -t 192.0.2.80:80 -r 198.51.100.1:80 -w 1\n');
    assert.equal(t.cut, 2);
    assert.deepEqual(t.services[0]!.realServers, []);
  });

  it('an edit of a real server the virtual server lacks adds none: ipvsadm says "No such destination"', () => {
    // -e without -m sends -g with the service's port (198.51.100.1:80): the kernel finds no such
    // destination (ENOENT), and the Masq real server on 8080 is left as it was
    const text = `${VS}# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:8080 -m -w 1\n# ipvsadm -e -t 192.0.2.80:80 -r 198.51.100.1:8080 -w 0\n`;
    assert.deepEqual(rows(text), ['198.51.100.1:8080 Masq 1']);
    assert.deepEqual(parseIpvs(text).noSuchDestination, [
      { line: 3, op: 'e', server: '198.51.100.1:80' },
    ]);
  });

  it('a delete of a real server the virtual server lacks changes nothing, and is said', () => {
    const text = `${VS}# ipvsadm -a -t 192.0.2.80:80 -r 198.51.100.1:8080 -m\n# ipvsadm -d -t 192.0.2.80:80 -r 198.51.100.2:8080\n`;
    assert.deepEqual(rows(text), ['198.51.100.1:8080 Masq 1']);
    assert.deepEqual(parseIpvs(text).noSuchDestination, [
      { line: 3, op: 'd', server: '198.51.100.2:8080' },
    ]);
  });
});
