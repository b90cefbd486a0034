// IPv6 text as kube-proxy and ip6tables-save print it (Go's net.IP.String(), RFC 5952), and the
// family-neutral helpers the rule model uses; each case a row.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  canonicalAddress,
  canonicalCidrOf,
  containsAny,
  familyOf,
  formatIPv6,
  ipv6,
} from '../../src/core/ipv6.js';

describe('IPv6 addresses', () => {
  const canonical: { text: string; printed: string }[] = [
    { text: '2001:db8:0:0:0:0:2:1', printed: '2001:db8::2:1' },
    { text: '2001:db8:0:1:1:1:1:1', printed: '2001:db8:0:1:1:1:1:1' }, // one zero group stays
    { text: '2001:0:0:1:0:0:0:1', printed: '2001:0:0:1::1' }, // the longest run
    { text: '2001:db8:0:0:1:0:0:1', printed: '2001:db8::1:0:0:1' }, // the first of equal runs
    { text: 'FD00:10:96::BE', printed: 'fd00:10:96::be' },
    { text: 'fd00:0010:0096:0000:0000:0000:0000:00be', printed: 'fd00:10:96::be' },
    { text: '::', printed: '::' },
    { text: '::1', printed: '::1' },
    { text: '1::', printed: '1::' },
    { text: '1:2:3:4:5:6:7::', printed: '1:2:3:4:5:6:7:0' },
    { text: '::192.0.2.1', printed: '::c000:201' },
  ];
  for (const c of canonical)
    it(`${c.text} prints as ${c.printed}`, () => {
      assert.equal(formatIPv6(ipv6(c.text)!), c.printed);
      assert.equal(canonicalAddress(c.text), c.text.includes('.') ? c.text : c.printed);
    });

  const invalid = [
    ':::',
    '1:2:3:4:5:6:7:8:9',
    '12345::',
    'g::1',
    '1::2::3',
    '1:2:3:4:5:6:7',
    '10.0.0.1',
    '',
    '::1.2.3',
  ];
  for (const text of invalid)
    it(`"${text}" is not an IPv6 address`, () => assert.equal(ipv6(text), undefined));
});

describe('either family', () => {
  const rows: { text: string; family?: string; cidr?: string }[] = [
    { text: '10.244.1.7', family: 'IPv4', cidr: '10.244.1.7/32' },
    { text: '10.244.1.7/16', family: 'IPv4', cidr: '10.244.0.0/16' },
    { text: 'fd00:10:244:1::7', family: 'IPv6', cidr: 'fd00:10:244:1::7/128' },
    { text: 'fd00:10:244:1::7/56', family: 'IPv6', cidr: 'fd00:10:244::/56' },
    { text: '::/0', family: 'IPv6', cidr: '::/0' },
    { text: 'fd00::/129', family: 'IPv6', cidr: undefined },
    { text: 'node-a' },
  ];
  for (const r of rows)
    it(`${r.text}: ${r.family ?? 'neither'}, ${r.cidr ?? 'no CIDR'}`, () => {
      assert.equal(familyOf(r.text), r.family);
      assert.equal(canonicalCidrOf(r.text), r.cidr);
    });

  const contains: { cidr: string; address: string; inside: boolean }[] = [
    { cidr: 'fd00:10:244::/56', address: 'fd00:10:244:ff::1', inside: true },
    { cidr: 'fd00:10:244::/56', address: 'fd00:10:245::1', inside: false },
    { cidr: '::/0', address: '::1', inside: true },
    { cidr: '::/0', address: '10.0.0.1', inside: false }, // another family never matches
    { cidr: '10.0.0.0/8', address: 'fd00::1', inside: false },
    { cidr: '10.0.0.0/8', address: '10.1.2.3', inside: true },
  ];
  for (const c of contains)
    it(`${c.cidr} ${c.inside ? 'holds' : 'does not hold'} ${c.address}`, () =>
      assert.equal(containsAny(c.cidr, c.address), c.inside));
});
