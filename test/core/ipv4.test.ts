// IPv4 CIDRs read from a rule's bytes (the packet walk's fast path) exactly as from text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesCidrContains, cidrContains, ipv4, parseCidr } from '../../src/core/ipv4.js';

const fromText = (cidr: string, address: number) => {
  const c = parseCidr(cidr);
  return c !== undefined && cidrContains(c, address);
};
const fromBytes = (cidr: string, address: number) => {
  // the CIDR in the middle of a line, as a rule's span is
  const line = Buffer.from(`-A X -d ${cidr} -j Y`);
  return bytesCidrContains(line, 8, 8 + Buffer.byteLength(cidr), address);
};

describe('a CIDR read from bytes', () => {
  const cases: { cidr: string; address: string; inside: boolean }[] = [
    { cidr: '10.96.0.10/32', address: '10.96.0.10', inside: true },
    { cidr: '10.96.0.10/32', address: '10.96.0.11', inside: false },
    { cidr: '10.96.0.10', address: '10.96.0.10', inside: true },
    { cidr: '10.244.0.0/16', address: '10.244.200.3', inside: true },
    { cidr: '10.244.0.0/16', address: '10.245.0.3', inside: false },
    { cidr: '0.0.0.0/0', address: '203.0.113.9', inside: true },
    { cidr: '10.244.1.7/8', address: '10.1.2.3', inside: true },
    // leading zeros, as Go's ParseIPSloppy reads them
    { cidr: '010.096.000.010/32', address: '10.96.0.10', inside: true },
    // not IPv4, or not a CIDR parseCidr takes: never inside
    { cidr: 'fd00::10/128', address: '10.96.0.10', inside: false },
    { cidr: '10.96.0.10/33', address: '10.96.0.10', inside: false },
    { cidr: '10.96.0.10/', address: '10.96.0.10', inside: false },
    { cidr: '10.96.0.10/3/2', address: '10.96.0.10', inside: false },
    { cidr: '10.96.0.10/032', address: '10.96.0.10', inside: false },
    { cidr: '10.96.0.10/255.255.255.255', address: '10.96.0.10', inside: false },
    { cidr: '256.96.0.10/32', address: '10.96.0.10', inside: false },
    { cidr: '10.96.0/24', address: '10.96.0.10', inside: false },
    { cidr: '10.96.0.10.1/32', address: '10.96.0.10', inside: false },
    { cidr: '10..0.10/32', address: '10.96.0.10', inside: false },
    { cidr: '1000.96.0.10/32', address: '10.96.0.10', inside: false },
    { cidr: 'example.com', address: '10.96.0.10', inside: false },
  ];
  for (const { cidr, address, inside } of cases)
    it(`${cidr} ${inside ? 'holds' : 'does not hold'} ${address}`, () => {
      const a = ipv4(address)!;
      assert.equal(fromBytes(cidr, a), inside);
      assert.equal(fromText(cidr, a), inside, 'the text reader agrees');
    });
});
