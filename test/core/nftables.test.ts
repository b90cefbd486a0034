// kube-proxy's nftables table read back into Service trees. The fixture is what the real
// kube-proxy v1.37.2 wrote in --proxy-mode=nftables in the lab cluster (test/support/cluster,
// the truth matrix's Services): `nft -j list table ip kube-proxy` on node-a.
// IP conventions: Pod CIDR 10.244.0.0/16 (node-a 10.244.1.0/24, node-b 10.244.2.0/24), Service
// CIDR 10.96.0.0/16, node-a 192.0.2.21, external IPs 203.0.113.10-11, LB IPs 198.51.100.20-23.
import { ELISION_FORMS } from '../support/elision-forms.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  NftParseError,
  missingSets,
  type NftTable,
} from '../../src/core/dataplane/nftables/read/listing.js';
import { isNftJson, parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { isNftText, parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { portChain } from '../../src/core/dataplane/nftables/trees/port-chain.js';
import type { ServiceTree, ServiceTrees } from '../../src/core/dataplane/trees.js';
import { rulesDoc } from '../../src/output/rules.js';
import { unavailableText } from '../../src/core/nodes/drift-unavailable.js';
import { allModes } from '../support/modes.js';

const fixture = readFileSync(
  new URL('../fixtures/nft/kube-proxy-1.37-node-a.json', import.meta.url),
  'utf8',
);
const table = parseNftJson(fixture, 'node-a.json').table('ip', 'kube-proxy')!;
const trees = buildNftServiceTrees(table);
const tree = (name: string): ServiceTree => {
  const t = trees.services.find((x) => x.name === name);
  assert.ok(t, `no tree for ${name}`);
  return t;
};
const eps = (list: ServiceTree['endpoints'] | undefined) =>
  (list ?? []).map(
    (e) => `${e.address} ${Math.round(e.probability * 100)}%${e.affinity ? ' affinity' : ''}`,
  );

describe('the nft -j listing', () => {
  it('is told from other input by its first bytes', () => {
    assert.ok(isNftJson(fixture));
    assert.ok(!isNftJson('*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n'));
  });

  it('reads the table, its base chains with hooks and priorities, its sets and maps', () => {
    assert.equal(table.comment, undefined); // nft -j puts the table comment nowhere it can be read
    assert.deepEqual(
      table.chains.filter((c) => c.hook).map((c) => `${c.name} ${c.type} ${c.hook} ${c.prio}`),
      [
        'filter-prerouting-pre-dnat filter prerouting -110',
        'filter-output-pre-dnat filter output -110',
        'filter-input filter input 0',
        'filter-forward filter forward 0',
        'filter-output filter output 0',
        'nat-prerouting nat prerouting -100',
        'nat-output nat output -100',
        'nat-postrouting nat postrouting 100',
      ],
    );
    const serviceIPs = table.set('service-ips')!;
    assert.equal(serviceIPs.kind, 'map');
    assert.deepEqual(serviceIPs.type, ['ipv4_addr', 'inet_proto', 'inet_service']);
    assert.deepEqual(
      serviceIPs.elements.find((e) => e.key[0] === '10.96.0.1'),
      {
        key: ['10.96.0.1', 'tcp', 443],
        verdict: { kind: 'goto', target: 'service-2QRHZV4L-default/kubernetes/tcp/https' },
      },
    );
    assert.equal(
      table.set('no-endpoint-services')!.elements[0]!.comment,
      'matrix/lb-local-empty:http',
    );
  });

  it('says FILE:LINE for JSON that does not parse, and what is missing otherwise', () => {
    assert.throws(
      () => parseNftJson('{"nftables": [\n{"table": }\n]}', 'x.json'),
      (e: Error) =>
        e instanceof NftParseError &&
        /^x\.json:2: read as an nft listing: not valid JSON/.test(e.message),
    );
    assert.throws(
      () => parseNftJson('{"rules": []}', 'x.json'),
      /x\.json:1: not an nft -j listing: no table, chain, rule, set or map in it/,
    );
  });

  it('JSON cut before any table is said cut, where, with nothing said of what is past the cut', () => {
    const tableAt = fixture.indexOf('{"table"');
    const pretty = JSON.stringify(JSON.parse(fixture), null, 2);
    const prettyAt = pretty.indexOf('"kube-proxy"', pretty.indexOf('"table"')) + 5; // mid-name
    const cuts: [string, number][] = [
      [fixture.slice(0, 60), 60], // inside metainfo
      [fixture.slice(0, tableAt), tableAt - 1], // between metainfo and the table, after its ", "
      [fixture.slice(0, tableAt + 30), tableAt + 30], // inside the table's own item
      [`${fixture.slice(0, tableAt + 30)}\n`, tableAt + 30], // a newline after the cut
    ];
    for (const [text, byte] of cuts)
      assert.throws(
        () => parseNftJson(text, 'x.json'),
        (e: Error) =>
          e instanceof NftParseError &&
          e.message ===
            `x.json:1: the nft -j listing is cut at byte ${byte} (line 1, inside its JSON), before any table: nothing after the cut was read` &&
          !/holds no/.test(e.message),
        text,
      );
    // pretty-printed (jq): the line of the cut
    const cutPretty = pretty.slice(0, prettyAt);
    const line = cutPretty.split('\n').length;
    assert.ok(line > 1);
    assert.throws(
      () => parseNftJson(cutPretty, 'x.json'),
      (e: Error) =>
        e.message.startsWith(
          `x.json:${line}: the nft -j listing is cut at byte ${prettyAt} (line ${line}, inside its JSON)`,
        ),
    );
    // whole JSON with no table in it is still said so
    assert.throws(
      () => parseNftJson('{"nftables": [{"metainfo": {"version": "1.0.6"}}]}', 'x.json'),
      (e: Error) => e.message === 'x.json: the nft listing holds no table',
    );
  });

  it('JSON cut after some tables: each table read, the cut said in them', () => {
    const items = (JSON.parse(fixture) as { nftables: unknown[] }).nftables;
    const other = [
      { table: { family: 'inet', name: 'firewalld', handle: 9 } },
      { chain: { family: 'inet', table: 'firewalld', name: 'filter_IN', handle: 1 } },
    ];
    const whole = `{"nftables": [${[...items, ...other].map((i) => JSON.stringify(i)).join(', ')}, {"rule": {"family": "inet", "table": "firewalld", "chain": "filter_IN", "expr": [{"match": `;
    const listing = parseNftJson(whole, 'x.json');
    assert.deepEqual(
      listing.tables.map((t) => `${t.family} ${t.name} ${t.cut?.line}`),
      ['ip kube-proxy 1', 'inet firewalld 1'],
    );
    assert.ok(listing.table('inet', 'firewalld')!.chain('filter_IN'));
    const t = listing.table('ip', 'kube-proxy')!;
    assert.deepEqual(
      rulesDoc(t, buildNftServiceTrees(t), { label: 'x.json' })
        .warnings.filter((w) => /cut there/.test(w.message))
        .map((w) => w.line),
      [1],
    );
  });

  it('an item it does not read (a named counter, a flowtable, an element to add) is said with its line, not dropped', () => {
    const items = (JSON.parse(fixture) as { nftables: unknown[] }).nftables;
    const extra = [
      { counter: { family: 'ip', name: 'seen', table: 'kube-proxy', packets: 0, bytes: 0 } },
      { flowtable: { family: 'ip', name: 'ft', hook: 'ingress', prio: 0, dev: ['eth0'] } },
      { element: { family: 'ip', table: 'kube-proxy', name: 'cluster-ips', elem: ['10.96.9.9'] } },
    ];
    // one item a line, the unread ones after the table's first three items
    const text = `{"nftables": [\n${[...items.slice(0, 3), ...extra, ...items.slice(3)]
      .map((i) => JSON.stringify(i))
      .join(',\n')}\n]}\n`;
    const t = parseNftJson(text, 'x.json').table('ip', 'kube-proxy')!;
    assert.deepEqual(
      t.unread?.map((u) => [u.line, Object.keys(JSON.parse(u.text) as object)[0]]),
      [
        [5, 'counter'],
        [6, 'flowtable'], // it names no table: said in the table listed before it
        [7, 'element'],
      ],
    );
    // what is read is read as before, and the unread items are said in the warnings
    assert.deepEqual(
      buildNftServiceTrees(t).services.map((x) => `${x.name} ${eps(x.endpoints).join(',')}`),
      trees.services.map((x) => `${x.name} ${eps(x.endpoints).join(',')}`),
    );
    assert.deepEqual(
      rulesDoc(t, buildNftServiceTrees(t), { label: 'x.json' })
        .warnings.filter((w) => w.kind === 'unread')
        .map((w) => w.line),
      [5, 6, 7],
    );
    assert.equal(table.unread, undefined); // the listing as nft prints it: nothing unread
  });
});

describe('Service trees from kube-proxy 1.37 nftables rules', () => {
  const cases: { name: string; clusterIP?: string; want: Partial<Record<string, unknown>> }[] = [
    {
      name: 'matrix/cluster-ip:http',
      want: { endpoints: ['10.244.1.4:80 50%', '10.244.2.2:80 50%'], nodePorts: [], local: [] },
    },
    {
      name: 'matrix/affinity:http',
      want: {
        endpoints: ['10.244.1.4:80 50% affinity', '10.244.2.2:80 50% affinity'],
        affinitySeconds: 10800,
      },
    },
    {
      name: 'matrix/node-port:http',
      want: { nodePorts: [32548], chains: ['svc', 'ext'] },
    },
    {
      name: 'matrix/np-local:http',
      want: {
        endpoints: ['10.244.1.3:80 100%'],
        local: ['10.244.1.3:80 100%'],
        chains: ['svc', 'svl', 'ext'],
      },
    },
    {
      name: 'matrix/itp-local:http',
      want: { endpoints: [], local: ['10.244.1.3:80 100%'], chains: ['svl'] },
    },
    {
      name: 'matrix/lb:http',
      want: { loadBalancerIPs: ['198.51.100.20'], chains: ['fw', 'svc', 'ext'] },
    },
    {
      // the listing alone: an address sent to the external chain, not firewalled, may be either
      name: 'matrix/external-ip:http',
      want: { externalIPs: [], loadBalancerIPs: [] },
    },
    {
      name: 'matrix/no-endpoints:http',
      want: {
        endpoints: [],
        verdicts: ['reject no-endpoint-services', 'reject no-endpoint-nodeports'],
      },
    },
  ];
  it('an external or load-balancer IP is told apart by the Services, not by the listing alone', () => {
    const entry = (x: ServiceTrees, name: string, address: string) =>
      x.services.find((t) => t.name === name)!.entries.find((e) => e.address === address)!;
    for (const [name, address] of [
      ['matrix/external-ip:http', '203.0.113.10'],
      ['matrix/lb-local:http', '198.51.100.21'],
    ] as const)
      assert.deepEqual(
        [entry(trees, name, address).kind, entry(trees, name, address).label],
        ['virtual-server', 'external or load-balancer IP (a listing does not say which)'],
      );
    const known = buildNftServiceTrees(table, { loadBalancerIPs: new Set(['198.51.100.21']) });
    assert.equal(entry(known, 'matrix/external-ip:http', '203.0.113.10').kind, 'external-ip');
    assert.equal(entry(known, 'matrix/lb-local:http', '198.51.100.21').kind, 'load-balancer');
  });

  for (const c of cases)
    it(c.name, () => {
      const t = tree(c.name);
      const got: Record<string, unknown> = {
        endpoints: eps(t.endpoints),
        local: eps(t.localEndpoints),
        nodePorts: t.nodePorts,
        chains: Object.keys(t.chains).sort(),
        loadBalancerIPs: t.loadBalancerIPs,
        externalIPs: t.externalIPs,
        affinitySeconds: t.affinitySeconds,
        verdicts: t.verdicts.map((v) => `${v.kind} ${v.chain}`),
      };
      for (const [k, v] of Object.entries(c.want))
        assert.deepEqual(
          got[k],
          k === 'chains' ? [...(v as string[])].sort() : v,
          `${c.name}: ${k}`,
        );
    });

  it('every ClusterIP of the listing has its tree; no chain is an orphan', () => {
    const vips = table.set('cluster-ips')!.elements.map((e) => String(e.key[0]));
    for (const ip of vips)
      assert.ok(
        trees.services.some((t) => t.clusterIP === ip),
        ip,
      );
    assert.deepEqual(trees.orphans, []);
  });

  it('marks ClusterIP traffic from outside the Pod CIDR for masquerade, and hairpin for local endpoints', () => {
    const t = tree('matrix/cluster-ip:http');
    assert.deepEqual(t.masquerade, [
      { chain: 'services', condition: 'ip saddr != 10.244.0.0/16', line: 0 },
    ]);
    // node-a's own endpoint is in hairpin-connections; node-b's is not this node's to masquerade
    assert.deepEqual(
      t.endpoints.map((e) => e.hairpinMasquerade),
      [true, null],
    );
  });

  it('reads the endpoint chains of kube-proxy 1.29-1.32, with the hairpin mark in them', () => {
    const old = parseNftJson(
      JSON.stringify({
        nftables: [
          { table: { family: 'ip', name: 'kube-proxy' } },
          {
            set: {
              family: 'ip',
              table: 'kube-proxy',
              name: 'cluster-ips',
              type: 'ipv4_addr',
              elem: ['172.30.0.41'],
            },
          },
          {
            map: {
              family: 'ip',
              table: 'kube-proxy',
              name: 'service-ips',
              type: ['ipv4_addr', 'inet_proto', 'inet_service'],
              map: 'verdict',
              elem: [
                [
                  { concat: ['172.30.0.41', 'tcp', 80] },
                  { goto: { target: 'service-ULMVA6XW-ns1/svc1/tcp/p80' } },
                ],
              ],
            },
          },
          {
            chain: { family: 'ip', table: 'kube-proxy', name: 'service-ULMVA6XW-ns1/svc1/tcp/p80' },
          },
          {
            chain: {
              family: 'ip',
              table: 'kube-proxy',
              name: 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
            },
          },
          {
            rule: {
              family: 'ip',
              table: 'kube-proxy',
              chain: 'service-ULMVA6XW-ns1/svc1/tcp/p80',
              expr: [
                {
                  vmap: {
                    key: { numgen: { mode: 'random', mod: 1, offset: 0 } },
                    data: {
                      set: [
                        [
                          0,
                          { goto: { target: 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80' } },
                        ],
                      ],
                    },
                  },
                },
              ],
            },
          },
          {
            rule: {
              family: 'ip',
              table: 'kube-proxy',
              chain: 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
              expr: [
                {
                  match: {
                    op: '==',
                    left: { payload: { protocol: 'ip', field: 'saddr' } },
                    right: '10.180.0.1',
                  },
                },
                { jump: { target: 'mark-for-masquerade' } },
              ],
            },
          },
          {
            rule: {
              family: 'ip',
              table: 'kube-proxy',
              chain: 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
              expr: [
                { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } },
                { dnat: { addr: '10.180.0.1', port: 80 } },
              ],
            },
          },
        ],
      }),
    ).table('ip', 'kube-proxy')!;
    const [t] = buildNftServiceTrees(old).services;
    assert.equal(t?.name, 'ns1/svc1:p80');
    assert.deepEqual(
      t?.endpoints.map((e) => [e.address, e.probability, e.hairpinMasquerade, e.chain]),
      [['10.180.0.1:80', 1, true, 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80']],
    );
  });

  it('names a chain by its Service port, whatever its kind', () => {
    assert.deepEqual(portChain('endpoint-WAVNJ3E2-matrix/kitchen/tcp/http__10.244.1.4/80'), {
      kind: 'endpoint',
      hash: 'WAVNJ3E2',
      name: 'matrix/kitchen:http',
      protocol: 'tcp',
      endpoint: '10.244.1.4/80',
    });
    assert.equal(portChain('services'), undefined);
  });
});

describe('the nft text listing', () => {
  // the same table, as `nft list table ip kube-proxy` printed it on node-a at the same moment
  const text = readFileSync(
    new URL('../fixtures/nft/kube-proxy-1.37-node-a.txt', import.meta.url),
    'utf8',
  );
  const fromText = parseNftText(text, 'node-a.txt').table('ip', 'kube-proxy')!;

  it('is told from other input', () => {
    assert.ok(isNftText(text));
    assert.ok(!isNftText(fixture));
    assert.ok(!isNftText('*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n'));
  });

  it('gives the same trees as the JSON listing', () => {
    assert.deepEqual(buildNftServiceTrees(fromText), trees);
  });

  it('reads base chains, named priorities, sets, maps, element comments and timeouts as the JSON does', () => {
    const shape = (t: typeof table) => ({
      chains: t.chains.map((c) => [c.name, c.type, c.hook, c.prio, c.policy, c.rules.length]),
      sets: t.sets.map((s) => [
        s.name,
        s.kind,
        s.type,
        s.map,
        s.timeout,
        s.comment,
        s.elements.length,
      ]),
    });
    assert.deepEqual(shape(fromText), shape(table));
    // the text's elements keep their lines; nft -j's are inside their map's object
    assert.deepEqual(
      fromText.set('no-endpoint-services')!.elements.map(({ line: _, ...e }) => e),
      table.set('no-endpoint-services')!.elements,
    );
    assert.ok(fromText.set('no-endpoint-services')!.elements.every((e) => e.line! > 0));
  });

  it('a whole table is not said to lack the affinity sets its rules use (their names hold / and _)', () => {
    for (const t of [fromText, table]) {
      assert.deepEqual(missingSets(t), []);
      assert.deepEqual(
        buildNftServiceTrees(t).services.flatMap((x) => (x.partial ? [x.name] : [])),
        [],
      );
    }
    // one the listing lacks is still said
    const chains = fromText.chains.map((c) => c.name);
    assert.ok(chains.includes('service-SP422VFX-matrix/affinity/tcp/http'));
    const without = {
      ...fromText,
      sets: fromText.sets.filter((x) => !x.name.startsWith('affinity-SBPE6CHB')),
      set: (n: string) => (n.startsWith('affinity-SBPE6CHB') ? undefined : fromText.set(n)),
    };
    assert.deepEqual(missingSets(without), [
      'affinity-SBPE6CHB-matrix/affinity/tcp/http__10.244.1.4/80',
    ]);
  });

  it('a paste cut inside the table: read as far as it goes, and where it was cut said', () => {
    const lines = text.split('\n');
    // cut in the middle of service-ips' element list
    const map = lines.findIndex((l) => l.includes('map service-ips {'));
    const at = lines.findIndex((l, i) => i > map && l.includes('elements = {'));
    const cut = parseNftText(lines.slice(0, at + 1).join('\n'), 'cut.txt').tables[0]!;
    // the map the cut is inside is held in part, typed for the walk (trace-cut.ts)
    assert.deepEqual(cut.cut, {
      line: at + 1,
      inside: 'table ip kube-proxy, map service-ips',
      // no newline ends its last line (nft ends every line with one): that line may be cut too
      unended: true,
      partly: [{ kind: 'map', name: 'service-ips' }],
    });
    // a newline after it: the line is whole, the table cut after it
    const ended = parseNftText(`${lines.slice(0, at + 1).join('\n')}\n`, 'cut.txt').tables[0]!;
    assert.equal(ended.cut?.unended, undefined);
    assert.equal(fromText.cut, undefined);
    // what came before the cut is read
    assert.ok(cut.set('cluster-ips'));
    // in a snapshot it is not compared: what is missing may be missing from the paste only
    const facts = {
      objects: [],
      nodes: {
        'node-a': {
          'proxy-mode': 'nftables',
          'nft-ip-kube-proxy-text': lines.slice(0, at + 1).join('\n'),
        },
      },
      meta: {},
    };
    const why = new Analysis(facts, { code: allModes }).node('node-a').driftUnavailable();
    assert.equal(why?.kind, 'listing-cut');
    assert.match(
      unavailableText('node-a', why!),
      new RegExp(
        `nft-ip-kube-proxy-text\\.txt ends at line ${at + 1} inside table ip kube-proxy, map service-ips: the listing was cut`,
      ),
    );
  });

  // a paste's warnings as `rules -o json` gives them: [kind, line]
  const warned = (t: NftTable) =>
    rulesDoc(t, buildNftServiceTrees(t), { label: 'x.txt' }).warnings.map((w) => [w.kind, w.line]);

  it('a paste cut mid-line: that line is the cut, said once, not also a line not read', () => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes('elements = {'));
    // the element list, and a chain's first line, cut a few characters in
    for (const k of [at, lines.findIndex((l) => l.trim().startsWith('chain '))]) {
      const cut = parseNftText([...lines.slice(0, k), lines[k]!.slice(0, 16)].join('\n'), 'x.txt')
        .tables[0]!;
      assert.equal(cut.cut?.line, k + 1);
      assert.equal(cut.unread, undefined);
      assert.deepEqual(warned(cut), [['cut-short', k + 1]]);
    }
  });

  it('a paste that ends in "..." inside the table: cut there (nothing after it compared), said once as the elision', () => {
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.trim().startsWith('chain services'));
    const elided = parseNftText([...lines.slice(0, at), '\t...'].join('\n'), 'x.txt').tables[0]!;
    assert.equal(elided.cut?.line, at + 1);
    assert.deepEqual(warned(elided), [['elided', at + 1]]);
    // what the elision hides is still not claimed: a Service whose chain is past it is partial
    const trees = buildNftServiceTrees(elided);
    assert.ok(trees.services.length > 0);
    for (const x of trees.services)
      assert.match(x.partial ?? '', /cut at line|elides lines/, x.name);
  });

  // the listing with `edits` applied (each: a line's text, and the lines that replace it), and
  // the number of each replacement's first line in it
  const edited = (...edits: [string, string][]) => {
    const lines = text.split('\n');
    for (const [old, by] of edits) {
      const i = lines.findIndex((l) => l.trim() === old);
      assert.ok(i >= 0, old);
      lines.splice(i, 1, ...by.split('\n'));
    }
    const at = edits.map(([, by]) => lines.indexOf(by.split('\n')[0]!) + 1);
    return { table: parseNftText(lines.join('\n'), 'x.txt').tables[0]!, at };
  };

  it('reads what nft prints of a set besides its type and elements, and elements with counters, timeouts and expiry', () => {
    const affinity = 'set affinity-SBPE6CHB-matrix/affinity/tcp/http__10.244.1.4/80 {';
    const { table: t } = edited([
      affinity,
      `\t${affinity}\n\t\tpolicy memory\n\t\tsize 65535\t# count 2\n\t\tauto-merge\n\t\tgc-interval 1s\n\t\tcounter\n\t\telements = { 10.244.2.9 counter packets 3 bytes 180 expires 2h59m58s460ms,\n\t\t\t     10.244.1.7 timeout 1h expires 59m comment "x" }`,
    ]);
    assert.equal(t.unread, undefined);
    assert.deepEqual(
      t.set(affinity.slice(4, -2))!.elements.map((e) => [e.key, e.comment]),
      [
        [['10.244.2.9'], undefined],
        [['10.244.1.7'], 'x'],
      ],
    );
  });

  it('a line inside a set, map or chain that is not what nft prints there: said with its line and block, its Services partial', () => {
    const dns = '10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns,';
    const numgen =
      'numgen random mod 2 vmap { 0 : goto endpoint-SBPE6CHB-matrix/affinity/tcp/http__10.244.1.4/80, 1 : goto endpoint-FBEAGDIQ-matrix/affinity/tcp/http__10.244.2.2/80 }';
    const { table: t, at } = edited(
      // a hand edit lost the " : " of a map element, and a numgen pair's colon
      [dns, `\t\t\t     ${dns.replace(' : ', ' ')}`],
      // an object kube-proxy does not write, over three lines
      [
        'chain reject-chain {',
        'flowtable ft {\nhook ingress priority filter\n}\nchain reject-chain {',
      ],
      [numgen, `\t\t${numgen.replace('1 : goto', '1 goto')}`],
    );
    assert.deepEqual(
      t.unread?.map((u) => [u.line, u.block ? `${u.block.kind} ${u.block.name}` : '']),
      [
        [at[0], 'map service-ips'],
        [at[1], ''],
        [at[2], 'chain service-SP422VFX-matrix/affinity/tcp/http'],
      ],
    );
    const got = buildNftServiceTrees(t);
    const partial = Object.fromEntries(got.services.map((x) => [x.name, x.partial]));
    // the Service port whose entry was not read: its chain is not said unreached, but unread
    assert.deepEqual(
      got.orphans.map((o) => [o.chain, o.partial]),
      [
        [
          'service-FY5PMXPG-kube-system/kube-dns/udp/dns',
          `line ${at[0]} (map service-ips) was not read`,
        ],
      ],
    );
    // the unread numgen is not read as shares: only the affinity rules' endpoints are there
    assert.ok(
      got.services
        .find((x) => x.name === 'matrix/affinity:http')!
        .endpoints.every((e) => e.probability === 0),
    );
    // that Service alone is partial: the lines not read name no other (the flowtable none)
    assert.deepEqual(
      Object.entries(partial).filter((e) => e[1]),
      [
        [
          'matrix/affinity:http',
          `line ${at[2]} (chain service-SP422VFX-matrix/affinity/tcp/http) was not read`,
        ],
      ],
    );
    // said in -o json's warnings, each with its line
    assert.deepEqual(
      rulesDoc(t, got, { label: 'x.txt' })
        .warnings.filter((w) => w.kind === 'unread')
        .map((w) => w.line),
      at,
    );
  });

  it('an element not read in a set every Service is read from leaves every Service partial; an elided one is an elision', () => {
    const { table: t, at } = edited(
      // an address misread by a photo's OCR
      ['elements = { 10.96.0.1, 10.96.0.10,', '\t\telements = { 10.96.0.1, 10.96.0.1O,'],
      ['10.96.242.192, 10.96.255.229 }', '\t\t\t     ... }'],
    );
    assert.deepEqual(
      t.unread?.map((u) => [u.line, u.text]),
      [[at[0], '10.96.0.1O']],
    );
    assert.deepEqual(t.elided, [at[1]]);
    assert.ok(
      !t.set('cluster-ips')!.elements.some((e) => String(e.key[0]).includes('.') === false),
    );
    assert.ok(buildNftServiceTrees(t).services.every((x) => x.partial !== undefined));
  });

  // an author's elisions other than dots (../../src/core/dataplane/paste/elisions.ts)
  const SNIPS = ELISION_FORMS;
  const service = (t: NftTable, name: string) =>
    buildNftServiceTrees(t).services.find((x) => x.name === name)!;

  it("an author's elision in any form inside a chain is one, as '...' is: the chain is elided and its Service claims no endpoints", () => {
    for (const snip of SNIPS) {
      const { table: t, at } = edited(['meta l4proto udp dnat to 10.244.1.2:53', `\t\t${snip}`]);
      assert.deepEqual(t.elided, at, snip);
      assert.equal(t.unread, undefined, snip);
      assert.equal(t.chain('service-FY5PMXPG-kube-system/kube-dns/udp/dns')!.elided, true, snip);
      const dns = service(t, 'kube-system/kube-dns:dns');
      assert.deepEqual(dns.endpoints, [], snip);
      assert.match(dns.partial ?? '', /elides lines/, snip);
    }
  });

  it('an elision line among wrapped elements elides that set or map: the elements on either side are read, a VIP not shown is not called external', () => {
    for (const snip of ['...', ...SNIPS]) {
      // the listing's lines 20 (in set cluster-ips) and 62 (in map service-ips)
      const { table: t } = edited(
        ['10.96.18.60, 10.96.33.216,', `\t\t\t     ${snip}`],
        [
          '10.96.0.10 . udp . 53 : goto service-FY5PMXPG-kube-system/kube-dns/udp/dns,',
          `\t\t\t     ${snip}`,
        ],
      );
      assert.equal(t.unread, undefined, snip);
      assert.deepEqual(t.elided, [20, 62], snip);
      const clusterIPs = t.set('cluster-ips')!;
      assert.equal(clusterIPs.elided, true, snip);
      assert.equal(t.set('service-ips')!.elided, true, snip);
      assert.deepEqual(
        clusterIPs.elements.map((e) => e.key[0]).slice(0, 3),
        ['10.96.0.1', '10.96.0.10', '10.96.75.168'],
        snip,
      );
      assert.equal(
        t.set('service-ips')!.elements.length,
        fromText.set('service-ips')!.elements.length - 1,
        snip,
      );
      // 10.96.18.60 is not among the cluster IPs shown: the set is elided, so it is not external
      const multi = service(t, 'matrix/multi-port:http');
      assert.equal(multi.clusterIP, '10.96.18.60', snip);
      assert.deepEqual(
        multi.entries.map((e) => e.kind),
        ['cluster-ip'],
        snip,
      );
    }
    // the chain an element goes to tells a cluster IP from the others, not the order nft lists
    // them in (a hash set's order): kitchen's external and LB IPs come before its cluster IP
    const { table: t } = edited(['10.96.75.168, 10.96.79.253,', '\t\t\t     ...']);
    const kitchen = service(t, 'matrix/kitchen:udp');
    assert.equal(kitchen.clusterIP, '10.96.79.253');
    assert.deepEqual(
      kitchen.entries
        .filter((e) => e.address && e.address !== '10.96.79.253')
        .map((e) => [e.address, e.kind]),
      [
        ['203.0.113.11', 'virtual-server'],
        ['198.51.100.23', 'load-balancer'],
      ],
    );
  });

  it('an elision that ends a chain ("... }", "[snip] }") elides it: its endpoint\'s DNAT target is not in the paste, not absent', () => {
    const chain = [
      '\t\tupdate @affinity-WAVNJ3E2-matrix/kitchen/tcp/http__10.244.1.4/80 { ip saddr }',
      '\t\tmeta l4proto tcp dnat to 10.244.1.4:80',
      '\t}',
    ];
    assert.ok(text.includes(chain.join('\n')));
    for (const end of ['... }', '[snip] }', '<omitted> }']) {
      const edited_ = text.replace(chain.join('\n'), `${chain[0]}\n\t${end}`);
      const t = parseNftText(edited_, 'x.txt').table('ip', 'kube-proxy')!;
      const name = 'endpoint-WAVNJ3E2-matrix/kitchen/tcp/http__10.244.1.4/80';
      assert.equal(t.chain(name)!.elided, true, end);
      assert.equal(t.unread, undefined, end);
      const ep = service(t, 'matrix/kitchen:http').endpoints.find((e) => e.chain === name)!;
      assert.equal(ep.address, undefined, end);
      assert.equal(ep.chainMissing, undefined, end);
      assert.match(ep.chainPartial ?? '', /elides/, end);
    }
  });

  it('an elision between tables is a line skipped, in neither table', () => {
    for (const snip of ['...', ...SNIPS]) {
      const listing = parseNftText(`table ip filter {\n}\n${snip}\n${text}`, 'x.txt');
      assert.deepEqual(listing.skipped, [3], snip);
      assert.equal(listing.table('ip', 'kube-proxy')!.elided, undefined, snip);
    }
  });

  it('reads every table of a ruleset, and says FILE:LINE for a line it cannot place', () => {
    const ruleset = `${text}\ntable ip6 kube-proxy {\n\tcomment "rules for kube-proxy"\n}\n`;
    assert.deepEqual(
      parseNftText(ruleset).tables.map((t) => `${t.family} ${t.name}`),
      ['ip kube-proxy', 'ip6 kube-proxy'],
    );
    assert.throws(
      () => parseNftText('table ip kube-proxy {\n}\n}\n', 'x.txt'),
      (e: Error) =>
        e instanceof NftParseError &&
        /^x\.txt:3: read as an nft listing: a closing brace that closes nothing/.test(e.message),
    );
  });
});
