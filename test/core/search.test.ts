// IP conventions: the seed cluster (the demo cluster): Pod CIDR 10.244.0.0/16, Service CIDR
// 10.1.0.0/16, nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80 and 10.244.1.7:80.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { buildSearchIndex } from '../../src/core/dataplane/iptables/search.js';
import { buildServiceTrees } from '../../src/core/dataplane/iptables/trees.js';
import { clusterDump } from '../bench/cluster-dump.js';

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const seed = parseIptables(fixture('seed-nat-S.txt') + fixture('seed-filter-S.txt'));
const index = buildSearchIndex(seed, buildServiceTrees(seed));
// the seed's Service among 300 generated ones, so ranking has competition
const bigRules = parseIptables(clusterDump({ services: 300, endpoints: 3 }));
const bigSeed = parseIptables(fixture('seed-nat-S.txt'));
const big = buildSearchIndex(bigRules, buildServiceTrees(bigRules));
const bigSeedIndex = buildSearchIndex(bigSeed, buildServiceTrees(bigSeed));

describe('fuzzy search', () => {
  const cases: [string, string, string, string | undefined][] = [
    // query, kind of the best hit, its text, the Service it belongs to
    ['nginx', 'service', 'default/nginx-svc:http', 'default/nginx-svc:http'],
    ['ELCM', 'chain', 'KUBE-SVC-ELCM5PCEQWBTUJ2I', 'default/nginx-svc:http'],
    ['10.244.1.7', 'endpoint', '10.244.1.7:80', 'default/nginx-svc:http'],
    ['8080', 'service', '10.1.190.219:8080', 'default/nginx-svc:http'],
    ['FNO4E6', 'chain', 'KUBE-SEP-FNO4E6JYD7EGUHTP', 'default/nginx-svc:http'],
    ['10.1.190.219', 'service', '10.1.190.219:8080', 'default/nginx-svc:http'],
    ['KUBE-FORWARD', 'chain', 'KUBE-FORWARD', undefined],
  ];
  for (const [query, kind, text, service] of cases) {
    it(`"${query}" finds ${kind} ${text} first`, () => {
      const [best] = index.search(query);
      assert.deepEqual([best?.kind, best?.text, best?.service], [kind, text, service]);
    });
  }

  it('returns the rules that match with the Service they belong to', () => {
    const rules = index.search('cluster IP').filter((h) => h.kind === 'rule');
    assert.ok(rules.length > 0);
    assert.ok(
      rules.every(
        (h) =>
          h.service === 'default/nginx-svc:http' &&
          h.chain === 'KUBE-SERVICES' &&
          h.line !== undefined,
      ),
    );
  });

  it('forgives a typo', () => {
    assert.equal(index.search('ngnix-svc')[0]?.text, 'default/nginx-svc:http');
  });

  it('gives the matched characters for highlighting', () => {
    const [best] = index.search('nginx');
    const [s, e] = best!.ranges.find(([a, b]) => b - a >= 4)!;
    assert.equal(best!.text.slice(s, e + 1), 'nginx');
  });

  it('ranks among hundreds of Services', () => {
    assert.equal(big.search('svc-123:http')[0]?.text, 'ns23/svc-123:http');
    assert.equal(big.search('172.30.0.77')[0]?.text, '172.30.0.77:80');
    assert.equal(bigSeedIndex.search('nginx')[0]?.text, 'default/nginx-svc:http');
  });

  it('finds nothing for nothing', () => {
    assert.deepEqual(index.search(''), []);
    assert.deepEqual(index.search('zzzzqqqq'), []);
  });
});

describe('search that does not invent matches', () => {
  // three endpoints whose addresses share prefixes, a DNS Service, the static kube-proxy rules
  const ep = (chain: string, ip: string, port: number, svc: string) =>
    `-A ${chain} -s ${ip}/32 -m comment --comment "${svc}" -j KUBE-MARK-MASQ\n-A ${chain} -p tcp -m comment --comment "${svc}" -m tcp -j DNAT --to-destination ${ip}:${port}`;
  const rs = parseIptables(`*nat
-A KUBE-SERVICES -d 10.1.190.219/32 -p tcp -m comment --comment "default/nginx-svc:http cluster IP" -m tcp --dport 8080 -j KUBE-SVC-ELCM5PCEQWBTUJ2I
-A KUBE-SERVICES -d 10.1.0.10/32 -p tcp -m comment --comment "kube-system/coredns:dns-tcp cluster IP" -m tcp --dport 53 -j KUBE-SVC-ERIFXISQEP7F7OF4
-A KUBE-SVC-ELCM5PCEQWBTUJ2I ! -s 10.244.0.0/16 -d 10.1.190.219/32 -p tcp -m comment --comment "default/nginx-svc:http cluster IP" -m tcp --dport 8080 -j KUBE-MARK-MASQ
-A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability 0.33333333349 -j KUBE-SEP-AAAAAAAAAAAAAAA7
-A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-AAAAAAAAAAAAAAA6
-A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-AAAAAAAAAAAAAA55
-A KUBE-SVC-ERIFXISQEP7F7OF4 -j KUBE-SEP-BBBBBBBBBBBBBBBB
${ep('KUBE-SEP-AAAAAAAAAAAAAAA7', '10.244.1.7', 80, 'default/nginx-svc:http')}
${ep('KUBE-SEP-AAAAAAAAAAAAAAA6', '10.244.1.8', 80, 'default/nginx-svc:http')}
${ep('KUBE-SEP-AAAAAAAAAAAAAA55', '10.244.1.80', 80, 'default/nginx-svc:http')}
${ep('KUBE-SEP-BBBBBBBBBBBBBBBB', '10.244.2.9', 53, 'kube-system/coredns:dns-tcp')}
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
COMMIT
`);
  const idx = buildSearchIndex(rs, buildServiceTrees(rs));
  const texts = (q: string) => [...new Set(idx.search(q).map((h) => h.text))].sort();

  const cases: { query: string; texts: string[] }[] = [
    { query: '10.244.1.8', texts: ['10.244.0.0/16', '10.244.1.8', '10.244.1.8:80'] },
    { query: '10.244.1.8:80', texts: ['10.244.1.8:80'] },
    {
      query: '10.244.1.0/24',
      texts: [
        '10.244.1.7',
        '10.244.1.7:80',
        '10.244.1.8',
        '10.244.1.80',
        '10.244.1.80:80',
        '10.244.1.8:80',
      ],
    },
    { query: '10.244.0.0/16', texts: texts('10.244.0.0/16').filter((t) => t.startsWith('10.244')) },
    { query: '80', texts: ['10.244.1.7:80', '10.244.1.80:80', '10.244.1.8:80'] },
    { query: '53', texts: ['10.1.0.10:53', '10.244.2.9:53', '53'] },
  ];
  for (const c of cases)
    it(`"${c.query}" matches exactly: ${c.texts.join(', ')}`, () =>
      assert.deepEqual(texts(c.query), c.texts));

  it('a CIDR query finds no address outside it', () => {
    assert.ok(texts('10.244.0.0/16').includes('10.244.2.9:53'));
    assert.ok(!texts('10.244.0.0/16').some((t) => t.startsWith('10.1.')));
  });

  it('forgives one or two letters in short words', () => {
    assert.equal(idx.search('ngnix')[0]?.service, 'default/nginx-svc:http');
    assert.equal(idx.search('corends')[0]?.service, 'kube-system/coredns:dns-tcp');
    assert.equal(idx.search('codrens')[0]?.service, 'kube-system/coredns:dns-tcp');
  });

  it('finds targets and marks in the rules, with the Service they belong to', () => {
    const masq = idx.search('MASQUERADE');
    assert.deepEqual(
      masq.filter((h) => h.text === 'MASQUERADE').map((h) => [h.chain, h.line]),
      [['KUBE-POSTROUTING', 20]],
    );
    const dnat = idx.search('dnat').filter((h) => h.text === 'DNAT');
    assert.equal(dnat.length, 4);
    assert.ok(dnat.every((h) => h.chain?.startsWith('KUBE-SEP-') && h.service));
    assert.deepEqual(
      idx
        .search('0x4000')
        .map((h) => [h.chain, h.text])
        .sort(),
      [
        ['KUBE-MARK-MASQ', '0x4000/0x4000'],
        ['KUBE-POSTROUTING', '0x4000/0x0'],
        ['KUBE-POSTROUTING', '0x4000/0x4000'],
      ],
    );
  });
});
