// One endpoint's hairpin in nftables mode, where the table has no hairpin-connections set:
// before 1.33 the endpoint chain holds the masquerade rule, so only that chain, read, can say.
// IP conventions: Pod 10.244.0.5, Service port 80/TCP.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nftablesHairpin } from '../../src/core/dataplane/nftables/hairpin.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';

const CHAIN = 'endpoint-AAAAAAAA-ns1/svc1/tcp/p80__10.244.0.5/80';
const table = (lines: string[]) =>
  parseNftScript(['add table ip kube-proxy', ...lines].join('\n')).table('ip', 'kube-proxy')!;
const ask = (lines: string[]) =>
  nftablesHairpin(table(lines), 'nft.txt', {
    node: 'node-a',
    ip: '10.244.0.5',
    port: 80,
    protocol: 'TCP',
    endpoint: {
      address: '10.244.0.5:80',
      chain: CHAIN,
      probability: 1,
      hairpinMasquerade: null,
      affinity: false,
      line: 1,
    },
  });

describe('nftables hairpin without the hairpin-connections set', () => {
  it('judges the endpoint chain it read: no "ip saddr … jump mark-for-masquerade" is missing', () => {
    const a = ask([
      `add chain ip kube-proxy ${CHAIN}`,
      `add rule ip kube-proxy ${CHAIN} meta l4proto tcp dnat to 10.244.0.5:80`,
    ]);
    assert.equal(a.kind, 'missing');
    assert.match(a.kind === 'missing' ? a.lines[0]!.text : '', /no rule ip saddr 10\.244\.0\.5/);
  });

  it('says nothing where the listing holds neither the chain nor the set it uses', () => {
    assert.equal(ask([]).kind, 'not-checked');
    const uses = ask([
      'add chain ip kube-proxy masquerading',
      'add rule ip kube-proxy masquerading ip daddr . ip saddr . meta l4proto . th dport @hairpin-connections masquerade',
      `add chain ip kube-proxy ${CHAIN}`,
    ]);
    assert.deepEqual(uses, {
      kind: 'not-checked',
      why: 'its listing leaves out the hairpin-connections set',
    });
  });
});
