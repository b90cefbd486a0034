// `cilium map get` of the load-balancer maps: through 1.8 lbmap's String() printed ports in network
// byte order (pkg/maps/lbmap/ipv4.go at v1.8.4; v1.9.0 converts them, cilium#13244, and brackets
// IPv6 addresses). kdebug names such a paste and says how its ports read, never swapping them
// where its form does not tell the release.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { mapGetPortsSaid } from '../../../src/core/dataplane/cilium/read/other-lines/map-get.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { NoRulesError } from '../../../src/core/dataplane/iptables/read/errors.js';

const PASTE = readFileSync(
  new URL(
    '../../fixtures/pastes/cilium-13243-map-get-lb4-services-v2-and-backends-network-byte-order-ports-cut.txt',
    import.meta.url,
  ),
  'utf8',
);

describe('cilium map get: ports in network byte order through 1.8', () => {
  it('cilium#13243 (IPv4): each printed port with its swap, as 1.8 or earlier, else as printed', () => {
    assert.throws(
      () => readPaste(PASTE, { file: 'p.txt' }),
      (e: unknown) =>
        e instanceof NoRulesError &&
        e.foreign === 'cilium-map' &&
        /network byte order \(1\.9 converts them, cilium#13244\); IPv4 entries do not show which printed these: from 1\.8 or earlier on a little-endian node \(x86, most arm64\) 20480 is 80, 21630 is 32340, 47873 is 443, 49443 is 9153, 13568 is 53, from 1\.9 on the ports are as printed/.test(
          e.message,
        ),
    );
  });

  // one line a row: the entries, what is said of their ports
  const cases: [string, string[], RegExp | undefined][] = [
    // an IPv6 key without brackets is 1.8's: swapped, not "either"
    [
      'an IPv6 key unbracketed',
      [
        'Key                 Value                    State   Error',
        'fd00::10:13568   0 (3) [FLAGS: 0x40]   sync',
      ],
      /IPv6 addresses without brackets are 1\.8's: on a little-endian node \(x86, most arm64\) 13568 is 53$/,
    ],
    // bracketed: 1.9's JoinHostPort, the port converted
    [
      'an IPv6 key in brackets',
      [
        'Key                 Value                    State   Error',
        '[fd00::10]:53   0 (3) [FLAGS: 0x40]   sync',
      ],
      undefined,
    ],
    ['a backend', ['7     ANY://10.0.1.230:20480   sync'], /20480 is 80/],
    ['no map entry', ['Key   Value   State   Error'], undefined],
  ];
  for (const [name, lines, said] of cases)
    it(`${name}: ${said ?? 'nothing said'}`, () => {
      const got = mapGetPortsSaid(lines.join('\n'));
      if (said) assert.match(got ?? '', said);
      else assert.equal(got, undefined);
    });
});
