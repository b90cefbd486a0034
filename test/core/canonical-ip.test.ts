// canonicalIP writes an address as kube-proxy does (Go's ParseIPSloppy: leading zeros read as
// decimal, IPv4-mapped IPv6 as IPv4) and hands an address already written so back unchanged.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalIP } from '../../src/core/ipv4.js';

describe('canonicalIP', () => {
  it('reads leading zeros and mapped addresses as kube-proxy does', () => {
    for (const [given, want] of <[string, string][]>[
      ['10.0.0.041', '10.0.0.41'],
      ['010.1.2.3', '10.1.2.3'],
      ['10.0.0.00', '10.0.0.0'],
      ['::ffff:10.0.0.01', '10.0.0.1'],
      [' 10.1.2.3 ', '10.1.2.3'],
    ])
      assert.equal(canonicalIP(given), want, given);
  });

  it('gives a canonical address, zeros included, and any other text back as it is', () => {
    for (const t of ['10.0.0.0', '0.0.0.0', '10.0.10.1', '100.64.0.10', 'fd00::1', 'node-a'])
      assert.equal(canonicalIP(t), t);
  });
});
