// `nft list chain ...` or `nft list map ...` alone prints one block of kube-proxy's table, wrapped
// in its `table ip kube-proxy { }` line: none of the table's base chains (nat-prerouting,
// filter-input ...) is in it, so what reaches a chain may lie outside it: no chain is proven
// reached or unreached, and "orphan chains: none" is not said.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

const text = (paste: string) => {
  const got = readPaste(paste, { file: 'p.txt' });
  assert.ok(got.mode === 'nftables', 'message' in got ? got.message : got.mode);
  return rulesText(got.dump, got.trees, { label: 'p' }).replace(/\s+/g, ' ');
};

const WEB = 'service-5JZ3V6QA-shop/web/tcp/http';

describe('one chain or map of kube-proxy listed on its own', () => {
  it('nft list chain: orphans not known, the listing said to hold one block', () => {
    const out = text(
      [
        `# nft list chain ip6 kube-proxy ${WEB}`,
        'table ip6 kube-proxy {',
        `\tchain ${WEB} {`,
        '\t\tip6 daddr fd00::10 tcp dport 80 ip6 saddr != fd00:10:244::/64 jump mark-for-masquerade',
        '\t\tnumgen random mod 1 vmap { 0 : goto endpoint-QGH7N2MZ-shop/web/tcp/http__fd00:10:244:1::5/8080 }',
        '\t}',
        '}',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(out, /orphan chains: none/);
    assert.match(
      out,
      /orphan chains: not known \(.*`nft list chain\|map\|set` lists that block alone/,
    );
  });

  it('nft list map: orphans not known', () => {
    const out = text(
      [
        '$ nft list map ip kube-proxy service-ips',
        'table ip kube-proxy {',
        '\tmap service-ips {',
        '\t\ttype ipv4_addr . inet_proto . inet_service : verdict',
        `\t\telements = { 10.96.120.15 . tcp . 80 : goto ${WEB} }`,
        '\t}',
        '}',
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(out, /orphan chains: none/);
    assert.match(out, /orphan chains: not known/);
  });
});
