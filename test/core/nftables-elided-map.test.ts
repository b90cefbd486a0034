// An author's elision among the elements of a rule's numgen map: kube-proxy's service chain picks
// an endpoint with `numgen random mod N vmap { 0 : goto endpoint-…, … }` (up to 1.32, and with
// session affinity) or DNATs through `numgen random mod N map { 0 : IP . PORT, … }` (1.33 on). nft
// prints such an anonymous map on the rule's line; authors wrap it one element a line and leave
// some out. The elements shown are endpoints, `mod N` says how many there are, and nothing is
// said of the ones left out.
// IP conventions: Pods 10.244.1.0/24, Service CIDR 10.96.0.0/16; Service ns/web port http, 80/tcp.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ELISION_FORMS } from '../support/elision-forms.js';
import { nftChainBase } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { rulesDoc, rulesText } from '../../src/output/rules.js';

const svc = { namespace: 'ns', service: 'web', port: 'http' };
const service = `service-${nftChainBase(svc, 'tcp')}`;
const endpoint = (ip: string) => `endpoint-${nftChainBase(svc, 'tcp', { ip, port: 80 })}`;
const PODS = ['10.244.1.2', '10.244.1.3', '10.244.1.4'];

/** kube-proxy's table (1.29-1.32 layout) for ns/web with three endpoints, its service chain's
 * rules as `rule` gives them. */
const listing = (rule: string) => `table ip kube-proxy {
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 10.96.0.20 . tcp . 80 : goto ${service} }
	}

	chain mark-for-masquerade {
		meta mark set meta mark | 0x00004000
	}

	chain ${service} {
		ip daddr 10.96.0.20 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade
${rule}
	}
${PODS.map(
  (ip) => `
	chain ${endpoint(ip)} {
		ip saddr ${ip} jump mark-for-masquerade
		meta l4proto tcp dnat to ${ip}:80
	}
`,
).join('')}}
`;

/** The listing's line holding `text`, 1-based. */
const lineOf = (paste: string, text: string) =>
  paste.split('\n').findIndex((l) => l.trim() === text) + 1;

const read = (paste: string) => {
  const t = parseNftText(paste, 'x.txt').table('ip', 'kube-proxy')!;
  const trees = buildNftServiceTrees(t);
  return { t, trees, web: trees.services.find((x) => x.name === 'ns/web:http')! };
};

const shares = (eps: { address: string | undefined; probability: number }[]) =>
  eps.map((e) => [e.address, Math.round(e.probability * 1000) / 1000]);

describe("an author's elision among a numgen map's elements", () => {
  it('wrapped one element a line (goto endpoint chains): the elements shown are endpoints at 1/N each, the rest not said', () => {
    for (const snip of ['...', '…', ...ELISION_FORMS]) {
      const paste = listing(`\t\tnumgen random mod 3 vmap {
			0 : goto ${endpoint(PODS[0]!)},
			${snip}
			2 : goto ${endpoint(PODS[2]!)} }`);
      const { t, trees, web } = read(paste);
      const at = lineOf(paste, snip);
      assert.equal(t.unread, undefined, snip);
      assert.deepEqual(t.elided, [at], snip);
      assert.deepEqual(
        shares(web.endpoints),
        [
          ['10.244.1.2:80', 0.333],
          ['10.244.1.4:80', 0.333],
        ],
        snip,
      );
      // how many there are, and that the others are not in the paste
      assert.match(web.partial ?? '', /numgen map shows 2 of its 3 endpoints/, snip);
      assert.match(web.partial ?? '', new RegExp(`line ${at}\\b`), snip);
      const said = rulesText(t, trees, { label: 'x.txt' });
      assert.doesNotMatch(said, /no endpoints|not read|match none of the endpoint rules/, snip);
      const doc = rulesDoc(t, trees, { label: 'x.txt' });
      assert.deepEqual(
        doc.warnings.filter((w) => w.kind === 'elided' || w.kind === 'unread').map((w) => w.kind),
        ['elided'],
        snip,
      );
      assert.equal(doc.services.find((s) => s.name === 'ns/web:http')!.fallThrough, null, snip);
      // the left-out endpoint's chain is in the paste: reached by no element shown, and said
      // to be perhaps among those left out
      const hidden = trees.orphans.find((o) => o.chain === endpoint(PODS[1]!));
      assert.match(hidden?.partial ?? '', new RegExp(`line ${at} elides`), snip);
    }
  });

  it('on the rule line itself, and with the closing brace on a line of its own', () => {
    const inline = listing(
      `\t\tnumgen random mod 3 vmap { 0 : goto ${endpoint(PODS[0]!)}, ..., 2 : goto ${endpoint(PODS[2]!)} }`,
    );
    const ownBrace = listing(`\t\tnumgen random mod 3 vmap {
			0 : goto ${endpoint(PODS[0]!)},
			1 : goto ${endpoint(PODS[1]!)},
			[...]
		}`);
    const a = read(inline);
    assert.equal(a.t.unread, undefined);
    assert.deepEqual(a.t.elided, [
      lineOf(
        inline,
        `numgen random mod 3 vmap { 0 : goto ${endpoint(PODS[0]!)}, ..., 2 : goto ${endpoint(PODS[2]!)} }`,
      ),
    ]);
    assert.match(a.web.partial ?? '', /shows 2 of its 3 endpoints/);
    const b = read(ownBrace);
    assert.equal(b.t.unread, undefined);
    assert.deepEqual(b.t.elided, [lineOf(ownBrace, '[...]')]);
    assert.deepEqual(shares(b.web.endpoints), [
      ['10.244.1.2:80', 0.333],
      ['10.244.1.3:80', 0.333],
    ]);
    assert.match(b.web.partial ?? '', /shows 2 of its 3 endpoints/);
  });

  it('an elision that hides none of the N elements numgen picks from leaves the map whole', () => {
    const { t, web } = read(
      listing(`\t\tnumgen random mod 2 vmap {
			0 : goto ${endpoint(PODS[0]!)},
			1 : goto ${endpoint(PODS[1]!)},
			...
		}`),
    );
    assert.equal(t.unread, undefined);
    assert.deepEqual(shares(web.endpoints), [
      ['10.244.1.2:80', 0.5],
      ['10.244.1.3:80', 0.5],
    ]);
    assert.equal(web.partial, undefined);
  });

  it('the DNAT map of 1.33 on (numgen random mod N map { 0 : IP . PORT, … }) alike', () => {
    const paste = listing(`\t\tmeta l4proto tcp dnat ip to numgen random mod 3 map {
			0 : 10.244.1.2 . 80,
			--
			2 : 10.244.1.4 . 80 }`);
    const { t, web } = read(paste);
    assert.equal(t.unread, undefined);
    assert.deepEqual(t.elided, [lineOf(paste, '--')]);
    assert.deepEqual(shares(web.endpoints), [
      ['10.244.1.2:80', 0.333],
      ['10.244.1.4:80', 0.333],
    ]);
    assert.match(web.partial ?? '', /shows 2 of its 3 endpoints/);
  });

  it("kube-proxy's script (nft -f input) with an elision inside a rule's map: read, and only that Service is partial", () => {
    const t = parseNftScript(
      [
        'add table ip kube-proxy',
        'add chain ip kube-proxy mark-for-masquerade',
        `add chain ip kube-proxy ${service}`,
        `add rule ip kube-proxy ${service} numgen random mod 3 vmap { 0 : goto ${endpoint(PODS[0]!)}, ..., 2 : goto ${endpoint(PODS[2]!)} }`,
        ...PODS.flatMap((ip) => [
          `add chain ip kube-proxy ${endpoint(ip)}`,
          `add rule ip kube-proxy ${endpoint(ip)} meta l4proto tcp dnat to ${ip}:80`,
        ]),
      ].join('\n'),
      'x.nft',
    ).table('ip', 'kube-proxy')!;
    assert.deepEqual(t.elided, [4]);
    assert.ok(t.chains.every((c) => !c.elided));
    const web = buildNftServiceTrees(t).services.find((x) => x.name === 'ns/web:http')!;
    assert.deepEqual(shares(web.endpoints), [
      ['10.244.1.2:80', 0.333],
      ['10.244.1.4:80', 0.333],
    ]);
    assert.match(web.partial ?? '', /shows 2 of its 3 endpoints \(line 4 elides the rest\)/);
  });
});
