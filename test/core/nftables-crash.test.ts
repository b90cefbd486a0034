// nft crashing after it printed part of a listing: the shell's "Segmentation fault" below what it
// printed. What came before is read; what nft did not print is said not in the paste, and that
// nft crashed (not that the paste was cut).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

const TABLE = `# nft list table ip kube-proxy
table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp }
	}
	chain service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp {
		ip daddr 10.96.0.10 tcp dport 53 ip saddr != 10.244.0.0/16 jump mark-for-masquerade
`;

const text = (paste: string) => {
  const got = readPaste(paste, { file: 'p' });
  assert.equal(got.mode, 'nftables');
  return got.mode === 'nftables' ? rulesText(got.dump, got.trees, { label: 'p' }) : '';
};

describe('nft crashing after printing', () => {
  it('inside a table: read up to the crash, which is named, its chain partial', () => {
    const out = text(`${TABLE}Segmentation fault (core dumped)\n`);
    assert.match(
      out,
      /nft crashed at line 9 \("Segmentation fault \(core dumped\)"\) inside table ip kube-proxy/,
    );
    assert.doesNotMatch(out, /it was cut there/);
    assert.match(out, /may not hold all its rules/);
  });

  it('after its table ended: the table is read, what nft did not print is said not there', () => {
    const out = text(`${TABLE}\t}\n}\nbash: segmentation fault  nft list ruleset\n`);
    assert.match(
      out,
      /line 11: nft crashed \("bash: segmentation fault {2}nft list ruleset"\) after the tables above/,
    );
  });

  it('ends only the listing it cut: a command typed after it prints a listing of its own, read', () => {
    const ruleset = `# nft list ruleset
table inet foo {
\tchain INPUT {
\t\ttype filter hook input priority filter; policy accept;
\t}
}
Segmentation fault (core dumped)
`;
    const out = text(`${ruleset}${TABLE}\t}\n}\n`);
    assert.match(out, /nftables table ip kube-proxy, 1 chain, 1 rule/);
    assert.match(out, /line 7: nft crashed/);
    // a crash inside the first listing's table cuts that table, not the next listing
    const inside = readPaste(`${ruleset.replace('}\nSeg', 'Seg')}${TABLE}\t}\n}\n`, { file: 'p' });
    assert.equal(inside.mode, 'nftables');
    if (inside.mode === 'nftables') {
      assert.equal(inside.dump.name, 'kube-proxy');
      assert.equal(inside.dump.cut, undefined);
    }
  });
});
