// Several `nft list map|chain|set ip kube-proxy NAME` outputs in one paste, each wrapped by nft in
// its own `table ip kube-proxy { ... }`, and grep'ed parts of them without their table line: read
// as parts of the one table. Names and elements as kube-proxy's nftables proxier writes them
// (service-ips, no-endpoint-services, service-HASH-ns/name/proto/port chains).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

const read = (text: string) => {
  const got = readPaste(text, { file: 'p.txt' });
  assert.ok(got.mode === 'nftables', 'message' in got ? got.message : got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p' }) };
};

const WEB = 'service-5JZ3V6QA-shop/web/tcp/http';

describe('a map grep, a chain and a map listed one command each', () => {
  const paste = [
    "root@worker-1:/# nft list map ip kube-proxy service-ips | grep 'shop/web'",
    `\t\t10.96.120.15 . tcp . 80 : goto ${WEB},`,
    '\t\t10.96.120.15 . udp . 8081 : goto service-HB3N4XQK-shop/web/udp/udp-echo,',
    '',
    `root@worker-1:/# nft list chain ip kube-proxy ${WEB}`,
    'table ip kube-proxy {',
    `\tchain ${WEB} {`,
    '\t\tip daddr 10.96.120.15 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade',
    `\t\tnumgen random mod 2 vmap { 0 : goto endpoint-QGH7N2MZ-shop/web/tcp/http__10.244.1.12/8080, 1 : goto endpoint-TL4VJQ6D-shop/web/tcp/http__10.244.2.7/8080 }`,
    '\t}',
    '}',
    '',
    'root@worker-1:/# nft list map ip kube-proxy no-endpoint-services',
    'table ip kube-proxy {',
    '\tmap no-endpoint-services {',
    '\t\ttype ipv4_addr . inet_proto . inet_service : verdict',
    '\t\tcomment "vmap to drop or reject packets to services with no endpoints"',
    '\t\telements = { 10.96.44.201 . tcp . 443 comment "shop/legacy-api:https" : goto reject-chain }',
    '\t}',
    '}',
  ].join('\n');

  it("reads the grep'ed elements as service-ips' and each table wrapper as the one table", () => {
    const { got, text } = read(paste);
    const ids = got.trees.services.map((t) => [t.id, t.clusterIP, t.port, t.protocol]);
    assert.equal(ids[0]![0], 'shop/legacy-api:https');
    assert.deepEqual(ids.slice(1), [
      ['shop/web:http', '10.96.120.15', 80, 'tcp'],
      ['shop/web:udp-echo', '10.96.120.15', 8081, 'udp'],
    ]);
    const web = got.trees.services.find((t) => t.id === 'shop/web:http')!;
    assert.equal(web.endpoints.length, 2);
    assert.doesNotMatch(text, /entry not in this paste|also holds table/);
    assert.match(text, /REJECT\s+shop\/legacy-api:https/);
  });
});

describe('a grep -A6 window of a chain, then `nft list set` of the same table', () => {
  const paste = [
    "$ sudo nft list table ip kube-proxy | grep -A6 'chain nodeport'",
    '        chain nodeports {',
    '                ip daddr @nodeport-ips meta l4proto tcp th dport 31380 goto service-XPGD46QR-team-a/admin-ui/tcp/http',
    '        }',
    '',
    '$ sudo nft list set ip kube-proxy nodeport-ips',
    'table ip kube-proxy {',
    '        set nodeport-ips {',
    '                type ipv4_addr',
    '                comment "IPs that accept NodePort traffic"',
    '                elements = { 10.0.0.21 }',
    '        }',
    '}',
  ].join('\n');

  it('reads the chain and the set into one table ip kube-proxy (was: "a table inside a table")', () => {
    const { got } = read(paste);
    assert.equal(got.dump.name, 'kube-proxy');
    assert.equal(got.dump.family, 'ip');
    assert.equal(got.dump.chain('nodeports')?.rules.length, 1);
    assert.deepEqual(
      got.dump.set('nodeport-ips')?.elements.map((e) => e.key),
      [['10.0.0.21']],
    );
  });
});

describe('`nft list tables`, a chain, then a later `nft list map ... | grep` of service-ips', () => {
  const paste = [
    '$ nft list tables',
    'table ip kube-proxy',
    'table ip filter',
    '',
    '$ nft list chain ip kube-proxy services',
    'table ip kube-proxy {',
    '\tchain services {',
    '\t\tip daddr . meta l4proto . th dport vmap @service-ips',
    '\t}',
    '}',
    '',
    '$ nft list map ip kube-proxy service-ips | grep 10.96.120.15',
    '\t\t10.96.120.15 . tcp . 80 : goto service-XQ3KZ2C7-netlab/web/tcp/http,',
  ].join('\n');

  it("reads the grep'ed element into service-ips (was: skipped as prose, and 'no Service entry')", () => {
    const { got, text } = read(paste);
    assert.deepEqual(
      got.trees.services.map((t) => [t.id, t.clusterIP, t.port, t.protocol]),
      [['netlab/web:http', '10.96.120.15', 80, 'tcp']],
    );
    assert.match(text, /line 13: the elements of kube-proxy's service-ips that the command above/);
    assert.doesNotMatch(text, /no Service entry/);
  });

  it('grep output at the end of the paste is not said cut (the map holds what grep kept)', () => {
    const { got, text } = read(paste);
    assert.equal(got.dump.cut, undefined);
    assert.doesNotMatch(text, /cut there|cut short/);
  });
});
