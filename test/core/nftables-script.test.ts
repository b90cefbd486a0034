// The script form kube-proxy feeds `nft -f` (and logs), proved against the real nft: the script
// is loaded into an empty network namespace of its own, listed back with `nft -j`, and both must
// give the same Service trees. The script is the kube-proxy 1.29-1.32 shape of its tests
// (endpoint chains with the hairpin mark), one Service with two endpoints, one without.
// IP conventions (kube-proxy's tests): Pod CIDR 10.0.0.0/8, Service CIDR 172.30.0.0/16.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { NftParseError } from '../../src/core/dataplane/nftables/read/listing.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { isNftScript, parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { traceNftPacket } from '../../src/core/dataplane/nftables/trace.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { hasCommand, skipWithout } from '../support/skip.js';
import { rulesText } from '../../src/output/rules.js';

const SVC = 'service-ULMVA6XW-ns1/svc1/tcp/p80';
const EP1 = 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80';
const EP2 = 'endpoint-ZCZBVNAZ-ns1/svc1/tcp/p80__10.180.0.2/80';
const SCRIPT = `add table ip kube-proxy { comment "rules for kube-proxy" ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip kube-proxy services
add chain ip kube-proxy mark-for-masquerade
add chain ip kube-proxy reject-chain
add rule ip kube-proxy reject-chain reject
add rule ip kube-proxy mark-for-masquerade mark set mark or 0x4000
add rule ip kube-proxy nat-prerouting jump services
add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add chain ip kube-proxy ${SVC}
add chain ip kube-proxy ${EP1}
add chain ip kube-proxy ${EP2}
add rule ip kube-proxy ${SVC} ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade
add rule ip kube-proxy ${SVC} numgen random mod 2 vmap { 0 : goto ${EP1} , 1 : goto ${EP2} }
add rule ip kube-proxy ${EP1} ip saddr 10.180.0.1 jump mark-for-masquerade
add rule ip kube-proxy ${EP1} meta l4proto tcp dnat to 10.180.0.1:80
add rule ip kube-proxy ${EP2} ip saddr 10.180.0.2 jump mark-for-masquerade
add rule ip kube-proxy ${EP2} meta l4proto tcp dnat to 10.180.0.2:80
add element ip kube-proxy cluster-ips { 172.30.0.41 }
add element ip kube-proxy cluster-ips { 172.30.0.46 }
add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto ${SVC} }
add element ip kube-proxy no-endpoint-services { 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }
`;

describe('the nft -f script form', () => {
  it('is told from a listing', () => {
    assert.ok(isNftScript(SCRIPT));
    assert.ok(!isNftScript('table ip kube-proxy {\n}\n'));
  });

  it('reads into the trees its text says', () => {
    const [svc1, svc6] = buildNftServiceTrees(
      parseNftScript(SCRIPT).table('ip', 'kube-proxy')!,
    ).services;
    assert.deepEqual(
      svc1?.endpoints.map((e) => [e.address, e.probability, e.hairpinMasquerade]),
      [
        ['10.180.0.1:80', 0.5, true],
        ['10.180.0.2:80', 0.5, true],
      ],
    );
    // 1.29-1.32 mark cluster IP traffic from outside the Pod CIDR in the service chain itself
    assert.deepEqual(
      svc1?.masquerade.map((m) => [m.chain, m.condition]),
      [[SVC, 'ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8']],
    );
    assert.equal(svc6?.name, 'ns6/svc6:p80');
    assert.deepEqual(
      svc6?.verdicts.map((v) => v.kind),
      ['reject'],
    );
  });

  it('applies flush and delete lines in order, as a resync writes them', () => {
    const resync = `${SCRIPT}flush chain ip kube-proxy ${SVC}\nadd rule ip kube-proxy ${SVC} numgen random mod 1 vmap { 0 : goto ${EP1} }\ndelete element ip kube-proxy no-endpoint-services { 172.30.0.46 . tcp . 80 }\n`;
    const trees = buildNftServiceTrees(parseNftScript(resync).table('ip', 'kube-proxy')!);
    assert.deepEqual(
      trees.services.map((t) => `${t.name} ${t.endpoints.map((e) => e.address).join(',')}`),
      ['ns1/svc1:p80 10.180.0.1:80'],
    );
    assert.deepEqual(
      trees.orphans.map((o) => o.chain),
      [EP2],
    );
  });

  it('an element, declaration or numgen statement nft would not take is an error at its line, not read half', () => {
    const last = SCRIPT.split('\n').length;
    for (const [line, why] of [
      [
        `add element ip kube-proxy service-ips { 172.30.0.9 . tcp 80 : goto ${SVC} }`,
        /not an element of service-ips/,
      ],
      [
        `add element ip kube-proxy service-ips { 172.30.0.9 . tcp . 80 goto ${SVC} }`,
        /not an element of service-ips/,
      ],
      [
        'add set ip kube-proxy extra { type ipv4_addr ; colour blue ; }',
        /not a line of an nft set or map: colour blue/,
      ],
      [
        `add rule ip kube-proxy ${SVC} numgen random mod 2 vmap { 0 : goto ${EP1} , 1 goto ${EP2} }`,
        /a DNAT or numgen statement not read/,
      ],
    ] as const)
      assert.throws(
        () => parseNftScript(`${SCRIPT}${line}\n`, 's.nft'),
        (e: Error) => e instanceof NftParseError && e.line === last && why.test(e.message),
        line,
      );
  });

  it("reads kube-proxy 1.37's whole transaction: its named counters are lines not read, the rules that count in them walk", () => {
    // TestOverallNFTablesRules turns on KubeProxyNFTablesLocalhostNodePorts (alpha, off by
    // default): named counters, and chains that count in them and reject
    const text = readFileSync(
      new URL('../fixtures/releases/37/nftables-overall-v4.nft', import.meta.url),
      'utf8',
    );
    const table = parseNftScript(text, 'overall.nft').table('ip', 'kube-proxy')!;
    const counters = text
      .split('\n')
      .flatMap((l, i) => (l.startsWith('add counter ') ? [i + 1] : []));
    assert.equal(counters.length, 3);
    assert.deepEqual(
      table.unread?.map((u) => u.line),
      counters,
    );
    const walk = traceNftPacket(
      table,
      { localAddresses: ['192.168.0.2'], interfaces: [], defaultInterface: undefined },
      { src: '127.0.0.1', dst: '127.0.0.1', dport: 3001, protocol: 'tcp', fromHost: true },
    );
    assert.deepEqual(
      walk.outcomes.map((o) => o.verdict),
      ['REJECT'],
    );
    assert.ok(
      walk.outcomes[0]!.rules.some((r) => r.chain === 'localhost-nodeport-reject-tcp'),
      JSON.stringify(walk.outcomes[0]!.rules.map((r) => r.chain)),
    );
  });

  it('a named counter of a table the script has not added yet is a line skipped, said, not lost', () => {
    const listing = parseNftScript(`add counter ip kube-proxy early-counter\n${SCRIPT}`, 's.nft');
    assert.deepEqual(listing.skipped, [1]);
  });

  it("an author's elision ('...', '# --- snip ---') leaves every chain and map open: no 'no endpoints'", () => {
    for (const snip of ['...', '# --- snip ---', '<omitted>']) {
      // the elision where the Service chain's numgen rule was: what it hides may be any chain's
      // rules or any map's elements
      const lines = SCRIPT.split('\n');
      const at = lines.findIndex((l) => l.includes('numgen random mod 2'));
      const script = [...lines.slice(0, at), snip, ...lines.slice(at + 1)].join('\n');
      const listing = parseNftScript(script, 's.nft');
      const t = listing.table('ip', 'kube-proxy')!;
      assert.deepEqual([t.elided, listing.skipped], [[at + 1], undefined], snip);
      assert.ok(t.chain(SVC)!.elided && t.set('service-ips')!.elided, snip);
      const [svc] = buildNftServiceTrees(t).services;
      assert.match(svc!.partial ?? '', /elides lines/, snip);
      const text = rulesText(t, buildNftServiceTrees(t), { label: 's' });
      assert.doesNotMatch(text, /no endpoints/, snip);
    }
  });

  it('keeps one element per key: added again, it takes the new verdict and place; a flushed or re-added set starts empty', () => {
    const map = 'no-endpoint-services';
    const add = (key: string, verdict: string) =>
      `add element ip kube-proxy ${map} { ${key} . tcp . 80 : ${verdict} }`;
    const keys = (script: string) =>
      parseNftScript(`${SCRIPT}${script}\n`)
        .table('ip', 'kube-proxy')!
        .set(map)!
        .elements.map((e) => `${String(e.key[0])} ${e.verdict?.kind ?? ''}`);
    const lines = (...xs: string[]) => xs.join('\n');
    // the script's own 172.30.0.46 first, then these
    assert.deepEqual(keys(lines(add('172.30.0.7', 'drop'), add('172.30.0.46', 'drop'))), [
      '172.30.0.7 drop',
      '172.30.0.46 drop',
    ]);
    assert.deepEqual(
      keys(
        lines(
          `flush set ip kube-proxy ${map}`,
          add('172.30.0.8', 'drop'),
          add('172.30.0.8', 'goto reject-chain'),
        ),
      ),
      ['172.30.0.8 goto'],
    );
    assert.deepEqual(
      keys(
        lines(
          `delete map ip kube-proxy ${map}`,
          `add map ip kube-proxy ${map} { type ipv4_addr . inet_proto . inet_service : verdict ; }`,
          add('172.30.0.9', 'drop'),
        ),
      ),
      ['172.30.0.9 drop'],
    );
  });

  const why =
    (hasCommand('nft') ? '' : 'nft (nftables) is missing') ||
    (hasCommand('unshare') ? '' : 'unshare (util-linux) is missing') ||
    (process.getuid?.() === 0 ? '' : 'root, for a network namespace of its own');
  describe('against the real nft', skipWithout(why), () => {
    it('nft loads the script and lists it back: the same trees', () => {
      // everything happens inside a network namespace made for this and gone with it
      const r = spawnSync(
        'unshare',
        ['--net', 'sh', '-c', 'nft -f - && nft -j list table ip kube-proxy'],
        {
          input: SCRIPT,
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 0, r.stderr);
      const listed = buildNftServiceTrees(parseNftJson(r.stdout).table('ip', 'kube-proxy')!);
      const read = buildNftServiceTrees(parseNftScript(SCRIPT).table('ip', 'kube-proxy')!);
      // mark conditions are matched text in one, nft's own spelling in the other
      const shape = (t: typeof read) =>
        t.services.map((s) => ({ ...s, masquerade: s.masquerade.map((m) => m.chain) }));
      assert.deepEqual(shape(read), shape(listed));
    });
  });
});
