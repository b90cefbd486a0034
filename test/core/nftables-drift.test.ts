// Drift in nftables mode, as a table test: the table kube-proxy should write for the objects of
// its TestOverallNFTablesRules (plus an internalTrafficPolicy Local Service) compares clean with
// itself, read as a script, as nft's JSON and as its listing (the last two from the real nft);
// and each edit of one line of it is found as the one drift it is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView, serviceCIDRs } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { nftablesDrift } from '../../src/core/dataplane/nftables/drift.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected/expected.js';
import { nftPortChains } from '../../src/core/dataplane/nftables/expected/port-script.js';
import { type NftTable } from '../../src/core/dataplane/nftables/read/listing.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { aService, anEndpointSlice } from '../support/builders.js';
import { NODE, objects } from '../support/nft-overall.js';
import { hasCommand, skipWithout } from '../support/skip.js';

const all: KubeObject[] = [
  ...objects,
  aService('ns9/itp', { clusterIP: '172.30.0.49', internalTrafficPolicy: 'Local' }),
  anEndpointSlice('ns9/itp', [
    ['10.180.0.9', { node: NODE }],
    ['10.180.1.9', { node: 'other-node' }],
  ]),
  // a source range holding the node and its load-balancer IP: nft merges the IP kube-proxy adds
  aService('ns12/lb-range', {
    type: 'LoadBalancer',
    clusterIP: '172.30.0.52',
    ports: [['p80', 80, 'TCP', 3012]],
    loadBalancerIPs: ['192.168.77.7'],
    sourceRanges: ['192.168.0.0/16'],
  }),
  anEndpointSlice('ns12/lb-range', ['10.180.0.12']),
  // a port without a name: its ServicePortName is "ns13/unnamed", its chains end in "/tcp/"
  aService('ns13/unnamed', { clusterIP: '172.30.0.53', ports: [['', 80]] }),
  anEndpointSlice('ns13/unnamed', ['10.180.0.13', '10.180.1.13', '10.180.2.13'], [['', 80]]),
];
const view = clusterView(all);
const exp = expectedRules(view, NODE);
const script = expectedNftScript(exp, serviceCIDRs(view));
const itp = nftPortChains(exp.servicePorts.find((sp) => sp.name === 'ns9/itp:p80')!);

/** The findings of `table` against the objects. */
const findings = (table: NftTable) =>
  nftablesDrift({
    node: NODE,
    source: 'nodes/test-node/nft-ip-kube-proxy.txt',
    expected: exp,
    serviceCIDRs: serviceCIDRs(view),
    table,
    trees: buildNftServiceTrees(table, {
      loadBalancerIPs: new Set(['1.2.3.4', '5.6.7.8', '192.168.77.7']),
    }),
    scoped: false,
  }).findings;

/** Drift of `table` against the objects: "id service" per finding. */
const drift = (table: NftTable) =>
  findings(table).map((f) => `${f.id}${f.service ? ` ${f.service}` : ''}`);

/** The script with the lines matching `drop` left out and `more` added. */
const edited = (drop: RegExp | undefined, more: string[] = [], swap?: [RegExp, string]) =>
  parseNftScript(
    [
      ...script
        .filter((l) => !drop || !drop.test(l))
        .map((l) => (swap ? l.replace(swap[0], swap[1]) : l)),
      ...more,
    ].join('\n'),
  ).tables[0]!;

describe('nftables drift', () => {
  it('finds nothing in the table kube-proxy should write', () => {
    assert.deepEqual(drift(edited(undefined)), []);
    // the node is in the source range: kube-proxy lets its load-balancer IP through too
    assert.ok(script.some((l) => l.endsWith('ip saddr != { 192.168.0.0/16, 192.168.77.7 } drop')));
  });

  it('a port without a name is compared too: an endpoint left out of its map is found on it', () => {
    const three =
      'mod 3 map { 0 : 10.180.0.13 . 80 , 1 : 10.180.1.13 . 80 , 2 : 10.180.2.13 . 80 }';
    assert.ok(script.some((l) => l.includes('ns13/unnamed/tcp/ ') && l.includes(three)));
    const two = 'mod 2 map { 0 : 10.180.0.13 . 80 , 1 : 10.180.1.13 . 80 }';
    assert.deepEqual(
      drift(edited(undefined, [], [new RegExp(three.replace(/[.{}]/g, '\\$&')), two])),
      ['endpoint-missing ns13/unnamed'],
    );
  });

  const cases: [string, NftTable, string[]][] = [
    [
      'a cluster IP element deleted',
      edited(/service-ips \{ 172\.30\.0\.41 /),
      ['service-rules-missing ns1/svc1:p80'],
    ],
    [
      'a node port element deleted',
      edited(/service-nodeports \{ tcp \. 3003 /),
      ['nodeport-missing ns3/svc3:p80'],
    ],
    [
      'an endpoint left out of the numgen map',
      edited(
        undefined,
        [],
        [
          /numgen random mod 2 map \{ 0 : 10\.180\.0\.4 \. 80 , 1 : 10\.180\.0\.5 \. 80 \}/,
          'numgen random mod 1 map { 0 : 10.180.0.4 . 80 }',
        ],
      ),
      ['endpoint-missing ns4/svc4:p80'],
    ],
    [
      'a gone endpoint still in the map',
      edited(
        undefined,
        [],
        [
          /dnat to 10\.180\.0\.1:80$/,
          'dnat ip addr . port to numgen random mod 2 map { 0 : 10.180.0.1 . 80 , 1 : 10.180.0.99 . 80 }',
        ],
      ),
      ['endpoint-stale ns1/svc1:p80'],
    ],
    [
      'numgen mod 3 over two endpoints',
      edited(undefined, [], [/numgen random mod 2 map/, 'numgen random mod 3 map']),
      ['weights-uneven ns4/svc4:p80'],
    ],
    [
      'the masquerade mark of an external chain deleted',
      edited(/external-4AT6LBPK-ns3\/svc3\/tcp\/p80 mark set/),
      ['masquerade-missing ns3/svc3:p80'],
    ],
    [
      'internalTrafficPolicy Local sent to every endpoint',
      edited(
        undefined,
        [
          `add chain ip kube-proxy ${itp.service}`,
          `add rule ip kube-proxy ${itp.service} meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.180.0.9 . 80 , 1 : 10.180.1.9 . 80 }`,
        ],
        [new RegExp(`goto ${itp.local.replace(/[/.]/g, '\\$&')} \\}`), `goto ${itp.service} }`],
      ),
      ['local-policy-wrong ns9/itp:p80'],
    ],
    [
      'the firewall-ips element deleted',
      edited(/firewall-ips \{ 5\.6\.7\.8 /),
      ['firewall-missing ns5/svc5:p80'],
    ],
    [
      'the firewall lets a wider range through',
      edited(undefined, [], [/203\.0\.113\.0\/25/, '203.0.113.0/24']),
      ['firewall-missing ns5/svc5:p80'],
    ],
    [
      'the no-endpoint reject deleted',
      edited(/no-endpoint-services \{ 172\.30\.0\.46 /),
      ['no-endpoints-reject-missing ns6/svc6:p80'],
    ],
    [
      'a hairpin element deleted',
      edited(/hairpin-connections \{ 10\.180\.0\.1 /),
      ['masquerade-missing ns1/svc1:p80'],
    ],
    [
      'a session affinity timeout changed',
      edited(undefined, [], [/timeout 10800s/, 'timeout 3600s']),
      ['affinity-wrong ns5/svc5:p80'],
    ],
    [
      'an affinity endpoint left out of the numgen map',
      edited(/numgen random mod 1 vmap \{ 0 : goto endpoint-GTK6MW7G/),
      ['endpoint-not-in-numgen ns5/svc5:p80'],
    ],
    [
      'a service chain deleted under its map element',
      edited(/ service-ULMVA6XW-ns1\/svc1\/tcp\/p80$| service-ULMVA6XW-ns1\/svc1\/tcp\/p80 meta/),
      ['element-chain-missing ns1/svc1:p80'],
    ],
    [
      'the jump from nat-prerouting deleted',
      edited(/nat-prerouting jump services/),
      ['entry-jump-missing'],
    ],
    [
      'the cluster IP masquerade deleted',
      edited(/masquerade clusterIP traffic from outside cluster/),
      ['masquerade-missing'],
    ],
    [
      'a node port address deleted',
      edited(/nodeport-ips \{ 192\.168\.0\.2 \}/),
      ['nodeport-missing'],
    ],
    [
      'a chain left over with rules',
      edited(undefined, [
        'add chain ip kube-proxy service-AAAAAAAA-ns9/gone/tcp/p80',
        'add rule ip kube-proxy service-AAAAAAAA-ns9/gone/tcp/p80 meta l4proto tcp dnat to 10.180.0.77:80',
      ]),
      ['orphan-chain'],
    ],
  ];
  for (const [what, table, ids] of cases)
    it(`finds ${ids.join(', ')}: ${what}`, () => {
      assert.deepEqual(drift(table), ids);
    });

  it("names the element of another port that still leads into a Service port's chain (a port change)", () => {
    const [f, ...rest] = findings(
      edited(
        undefined,
        [],
        [
          /service-ips \{ 172\.30\.0\.41 \. tcp \. 80 :/,
          'service-ips { 172.30.0.41 . tcp . 8080 :',
        ],
      ),
    );
    assert.deepEqual([f?.id, rest], ['service-rules-missing', []]);
    assert.match(
      f!.explanation,
      /; its elements for 172\.30\.0\.41:8080\/tcp lead into the Service port's chains instead/,
    );
    // the old port's connections meet cluster-ips-check: the address is still a cluster IP
    // each with its line in the script read (the swap keeps every line where it was)
    const at = (re: RegExp) =>
      `nodes/test-node/nft-ip-kube-proxy.txt:${script.findIndex((l) => re.test(l)) + 1}`;
    assert.deepEqual(f!.drift.actual, [
      `${at(/service-ips \{ 172\.30\.0\.41 \. tcp \. 80 :/)}: service-ips 172.30.0.41 . tcp . 8080 : goto service-ULMVA6XW-ns1/svc1/tcp/p80`,
      `${at(/cluster-ips \{ 172\.30\.0\.41 \}/)}: cluster-ips 172.30.0.41`,
      `${at(/filter-forward ct state new jump cluster-ips-check$/)}: ct state new jump cluster-ips-check`,
      `${at(/cluster-ips-check ip daddr @cluster-ips reject /)}: ip daddr @cluster-ips reject`,
    ]);
    assert.match(
      f!.explanation,
      /a port the Service port does not have .*a port change keeps them/,
    );
  });

  it('says an address, not a port, where the element is for the cluster IP the Service had before it was created again', () => {
    const [f] = findings(
      edited(
        undefined,
        [],
        // its cluster-ips element and its service-ips one, as kube-proxy wrote them then
        [/\b172\.30\.0\.41 /, '172.30.0.99 '],
      ),
    );
    assert.match(
      f!.explanation,
      /its elements for 172\.30\.0\.99:80\/tcp lead into the Service port's chains instead, an address the Service port does not have in the API \(the chains' names hold no address: a Service deleted and created again/,
    );
    assert.doesNotMatch(f!.explanation, /port change/);
  });
});

const why =
  hasCommand('nft') && hasCommand('unshare') ? '' : 'nft and unshare (nftables, util-linux)';
describe('nftables drift on what the real nft lists', skipWithout(why), () => {
  const listed = (args: string[]) => {
    const r = spawnSync('unshare', ['-n', 'sh', '-c', `nft -f - && nft ${args.join(' ')}`], {
      input: script.join('\n') + '\n',
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };

  it('finds nothing in the table loaded and listed as JSON (nft -j list table)', () => {
    assert.deepEqual(
      drift(parseNftJson(listed(['-j', 'list', 'table', 'ip', 'kube-proxy'])).tables[0]!),
      [],
    );
  });

  it('finds nothing in the table loaded and listed as text (nft list table)', () => {
    assert.deepEqual(
      drift(parseNftText(listed(['list', 'table', 'ip', 'kube-proxy'])).tables[0]!),
      [],
    );
  });
});
