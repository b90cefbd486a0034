// IP conventions: the seed cluster (SEEDS.md section 3): Pod CIDR 10.244.0.0/16, Service CIDR
// 10.1.0.0/16, nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80 and 10.244.1.7:80.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/core/iptables.js';
import { buildSearchIndex } from '../../src/core/search.js';
import { buildServiceTrees } from '../../src/core/service-tree.js';
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
