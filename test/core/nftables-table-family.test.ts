// The family of a part of kube-proxy's nftables table pasted without its `table` line: what its
// rules match says (`ip6 daddr ...` in an IPv6 table, `ip daddr ...` in an IPv4 one), read from
// the parsed rules, not from their JSON text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';
import { tableFamily } from '../../src/core/dataplane/nftables/read/listing.js';

/** A headless part: chains of these rules, one chain each, no `table` line. */
const part = (...rules: string[]) => {
  const text = rules.map((r, k) => `\tchain service-${k} {\n\t\t${r}\n\t}\n`).join('');
  const t = parseNftText(text, 'p.txt').tables[0]!;
  assert.equal(t.headless, true);
  return t;
};

describe("a headless nftables part's family", () => {
  it('is what its rules match: ip6, ip, or not known where none says', () => {
    assert.equal(tableFamily(part('ip6 daddr fd00:10:96::1 tcp dport 80 jump x')), 'ip6');
    assert.equal(tableFamily(part('ip daddr 10.96.0.1 tcp dport 80 jump x')), 'ip');
    assert.equal(tableFamily(part('meta l4proto tcp jump x')), undefined);
  });

  it('is ip6 where any rule matches ip6, whichever chain comes first', () => {
    assert.equal(tableFamily(part('ip daddr 10.96.0.1 jump x', 'ip6 saddr fd00::1 jump y')), 'ip6');
    assert.equal(tableFamily(part('ip6 saddr fd00::1 jump y', 'ip daddr 10.96.0.1 jump x')), 'ip6');
  });

  it('is not said by a word that only begins with ip', () => {
    assert.equal(tableFamily(part('ipsec in reqid 1 jump x')), undefined);
  });
});
