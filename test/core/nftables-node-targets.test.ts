// `nft list map|chain ip kube-proxy NAME` run on two nodes in one paste (`ssh node-a ...`,
// `ssh node-b ...`, prompts naming each): nft wraps each in its own `table ip kube-proxy`, but
// they are two nodes' tables, not parts of one: not joined (no endpoint shares from node-b's
// chain under node-a's map), said apart. Parts of one node's table are still joined.
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
const paste = (first: string, second: string) =>
  [
    first,
    'table ip kube-proxy {',
    '\tmap service-ips {',
    '\t\ttype ipv4_addr . inet_proto . inet_service : verdict',
    `\t\telements = { 10.96.120.15 . tcp . 80 : goto ${WEB} }`,
    '\t}',
    '}',
    second,
    'table ip kube-proxy {',
    `\tchain ${WEB} {`,
    '\t\tip daddr 10.96.120.15 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade',
    `\t\tnumgen random mod 2 vmap { 0 : goto endpoint-QGH7N2MZ-shop/web/tcp/http__10.244.1.12/8080, 1 : goto endpoint-TL4VJQ6D-shop/web/tcp/http__10.244.2.7/8080 }`,
    '\t}',
    '}',
    '',
  ].join('\n');

describe('a map and a chain listed on two nodes', () => {
  for (const [what, a, b] of [
    [
      'ssh',
      `$ ssh node-a nft list map ip kube-proxy service-ips`,
      `$ ssh -p 2222 root@node-b nft list chain ip kube-proxy ${WEB}`,
    ],
    [
      'prompts',
      'root@node-a:~# nft list map ip kube-proxy service-ips',
      `root@node-b:~# nft list chain ip kube-proxy ${WEB}`,
    ],
    [
      'kubectl exec into two kube-proxy pods',
      '$ kubectl -n kube-system exec kube-proxy-aaaaa -- nft list map ip kube-proxy service-ips',
      `$ kubectl -n kube-system exec kube-proxy-bbbbb -- nft list chain ip kube-proxy ${WEB}`,
    ],
  ] as const)
    it(`${what}: not joined into one table, said as another node's`, () => {
      const { text } = read(paste(a, b));
      assert.doesNotMatch(text, /50%/);
      assert.match(text, /chain not in this paste/);
      assert.match(text.replace(/\s+/g, ' '), /as another node lists it/);
    });

  it('both on one node: joined, the chain its endpoints give', () => {
    const { text } = read(
      paste(
        '$ ssh node-a nft list map ip kube-proxy service-ips',
        `$ ssh node-a nft list chain ip kube-proxy ${WEB}`,
      ),
    );
    assert.match(text, /50%/);
    assert.doesNotMatch(text, /another node/);
  });
});
