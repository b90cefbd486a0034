// Which iptables backend holds kube-proxy's chains, and which proxy mode the rules show.
// IP conventions: Service CIDR 10.96.0.0/16 (web 10.96.0.20), Pod CIDR 10.244.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeDump } from '../../../src/core/facts/facts.js';
import { parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';
import {
  rulesetFromState,
  rulesetState,
} from '../../../src/core/dataplane/iptables/read/ruleset.js';
import {
  backendToRead,
  modeFromRules,
  nodeBackends,
  rulesetSigns,
  textSigns,
  type NodeBackends,
} from '../../../src/core/dataplane/iptables/backend.js';

// the nat tables as each save binary prints them
const KUBE_NAT = [
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-SVC-AAAAAAAAAAAAAAAA - [0:0]',
  '-A PREROUTING -j KUBE-SERVICES',
  '-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
  'COMMIT',
  '',
].join('\n');
const EMPTY_NAT = '*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n';
const IPVS_NAT = [
  '*nat',
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-NODE-PORT - [0:0]',
  '-A KUBE-SERVICES ! -s 10.244.0.0/16 -m comment --comment "Kubernetes service cluster ip + port for masquerade purpose" -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ',
  '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
  'COMMIT',
  '',
].join('\n');
const WARNING = '# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n';

describe('iptables backend per node', () => {
  const cases: [string, Record<string, string> | undefined, NodeBackends['chains'], boolean?][] = [
    ['nothing read', undefined, 'unknown'],
    ['only the default dump', { 'iptables-save': KUBE_NAT }, 'unknown'],
    [
      'nft only',
      { 'iptables-nft-save-nat': KUBE_NAT, 'iptables-legacy-save-nat': EMPTY_NAT },
      'nft',
    ],
    [
      'legacy only',
      { 'iptables-nft-save-nat': EMPTY_NAT, 'iptables-legacy-save-nat': KUBE_NAT },
      'legacy',
    ],
    [
      'both: one set is stale',
      { 'iptables-nft-save-nat': KUBE_NAT, 'iptables-legacy-save-nat': KUBE_NAT },
      'both',
    ],
    [
      'neither (nftables mode, or no kube-proxy)',
      { 'iptables-nft-save-nat': EMPTY_NAT, 'iptables-legacy-save-nat': EMPTY_NAT },
      'none',
    ],
    [
      'legacy binary missing on the node: not read, not "none"',
      { 'iptables-nft-save-nat': KUBE_NAT },
      'nft',
    ],
    [
      'a whole legacy dump counts like its nat table',
      { 'iptables-legacy-save': KUBE_NAT, 'iptables-nft-save-nat': EMPTY_NAT + WARNING },
      'legacy',
      true,
    ],
  ];
  for (const [name, outputs, chains, warning = false] of cases)
    it(name, () => {
      const b = nodeBackends(Object.keys(outputs ?? {}), (s) => textSigns(outputs![s]!));
      assert.equal(b.chains, chains);
      assert.equal(b.legacyTablesWarning, warning);
    });

  it('reads the backend with the chains when the default iptables-save shows none', () => {
    const cases: [string, Record<string, string>, string | undefined][] = [
      [
        'default has them',
        { 'iptables-save': KUBE_NAT, 'iptables-legacy-save-nat': KUBE_NAT },
        undefined,
      ],
      [
        'legacy has them',
        { 'iptables-save': EMPTY_NAT, 'iptables-legacy-save-nat': KUBE_NAT },
        'legacy',
      ],
      ['nft has them', { 'iptables-save': EMPTY_NAT, 'iptables-nft-save-nat': KUBE_NAT }, 'nft'],
      [
        'already read whole',
        {
          'iptables-save': EMPTY_NAT,
          'iptables-legacy-save-nat': KUBE_NAT,
          'iptables-legacy-save': KUBE_NAT,
        },
        undefined,
      ],
      [
        'nobody has them',
        { 'iptables-save': EMPTY_NAT, 'iptables-nft-save-nat': EMPTY_NAT },
        undefined,
      ],
    ];
    for (const [name, outputs, want] of cases) assert.equal(backendToRead(outputs), want, name);
    // the same for the IPv6 proxier's dumps, each family on its own
    const ip6 = (o: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(o).map(([k, v]) => [k.replace(/^iptables/, 'ip6tables'), v]),
      );
    for (const [name, outputs, want] of cases) {
      assert.equal(backendToRead(ip6(outputs), 'ip6tables'), want, `IPv6: ${name}`);
      assert.equal(backendToRead(ip6(outputs)), undefined, `IPv4 unread: ${name}`);
    }
  });

  it('diagnoses the dump with kube-proxy chains, whatever stem it is under', () => {
    const f = {
      objects: [],
      meta: {},
      nodes: { n: { 'iptables-save': EMPTY_NAT, 'iptables-legacy-save': KUBE_NAT } },
    };
    assert.equal(nodeDump(f, 'n')?.source, 'nodes/n/iptables-legacy-save.txt');
    f.nodes.n['iptables-save'] = KUBE_NAT;
    assert.equal(nodeDump(f, 'n')?.source, 'nodes/n/iptables-save.txt');
    assert.equal(
      nodeDump({ ...f, nodes: { n: { 'iptables-save': EMPTY_NAT } } }, 'n')?.text,
      EMPTY_NAT,
    );
  });
});

describe('proxy mode from the rules', () => {
  const cases: [string, string, string | undefined][] = [
    ['KUBE-SVC chains: iptables', KUBE_NAT, 'iptables'],
    ['the KUBE-CLUSTER-IP ipset: ipvs', IPVS_NAT, 'ipvs'],
    ['nothing of kube-proxy: cannot tell', EMPTY_NAT, undefined],
  ];
  for (const [name, dump, want] of cases) it(name, () => assert.equal(modeFromRules(dump), want));
});

describe('a parsed dump shows the same signs as its text', () => {
  const cases: [string, string][] = [
    ['iptables mode', KUBE_NAT],
    ['ipvs mode', IPVS_NAT],
    ['no kube-proxy chains', EMPTY_NAT],
    ['iptables-nft-save with the legacy warning', KUBE_NAT + WARNING],
    ['ipvs mode with the legacy warning', WARNING + IPVS_NAT],
  ];
  for (const [name, dump] of cases)
    it(name, () => assert.deepEqual(rulesetSigns(parseIptables(dump)), textSigns(dump)));
  it('the parser keeps the line of the legacy warning, through a family and a worker', () => {
    const rs = parseIptables(KUBE_NAT + WARNING);
    const line = KUBE_NAT.split('\n').length;
    assert.equal(rs.legacyWarning, line);
    assert.equal(rs.ofFamily('IPv4').legacyWarning, line);
    assert.equal(rulesetFromState(rulesetState(rs, new Uint8Array())).legacyWarning, line);
    assert.equal(parseIptables(KUBE_NAT).legacyWarning, undefined);
  });
  it('each sign can be seen (the cases are not all alike)', () => {
    const signs = cases.map(([, d]) => textSigns(d));
    assert.deepEqual(
      signs.map((s) => [s.kubeChains, s.legacyTablesWarning, s.mode]),
      [
        [true, false, 'iptables'],
        [true, false, 'ipvs'],
        [false, false, undefined],
        [true, true, 'iptables'],
        [true, true, 'ipvs'],
      ],
    );
  });
});
