// nftables mode: a Service port's packets dropped or rejected on the node where kube-proxy's table
// would deliver them are an error, service-traffic-diverted, whichever chain the rule is in (the
// Service chain, an endpoint chain, the external chain service-nodeports leads to, a filter chain
// kube-proxy owns) or a base chain's drop policy; its words name the rule by FILE:LINE. Each fault
// is made on the real recorded table of kube-proxy v1.31 and v1.37 (test/fixtures/releases), one
// JSON object per line, as `jq` splits nft -j's, so a rule's line is its own. kube-proxy's own
// rejects and drops (no endpoints, source ranges, unallocated cluster IPs) stay no finding
// (issue 38).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { severityOf } from '../../src/core/dataplane/drift.js';
import { nftStems } from '../../src/core/facts/facts.js';
import type { Facts } from '../../src/core/model.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { allModes } from '../support/modes.js';
import { FIXTURES } from './record.js';

type Item = Record<string, { name?: string; chain?: string; policy?: string } | undefined>;
interface Listing {
  nftables: Item[];
}
const NODE = 'node-a';
const PORT = 'matrix/cluster-ip:http';
const STEM = nftStems('IPv4');

/** The name of the chain of `kind` ("service", "external", "endpoint") of a Service port
 * ("matrix/cluster-ip/tcp/http"), the first the table lists. */
const chainOf = (json: Listing, kind: string, port: string) => {
  const c = json.nftables.find(
    (o) => o['chain']?.name?.startsWith(`${kind}-`) && o['chain'].name.includes(`-${port}`),
  );
  return c?.['chain']?.name ?? assert.fail(`no ${kind} chain of ${port}`);
};

/** A rule of kube-proxy's table (nft -j's form): `expr` in `chain`. */
const rule = (chain: string, expr: unknown[]): Item => ({
  rule: { family: 'ip', table: 'kube-proxy', chain, expr } as Item['rule'],
});

/** `item` put before the first rule of its chain. */
function first(json: Listing, item: Item): void {
  const at = json.nftables.findIndex((o) => o['rule']?.chain === item['rule']!.chain);
  assert.ok(at >= 0, `${item['rule']!.chain} holds rules`);
  json.nftables.splice(at, 0, item);
}

/** The address of a ready endpoint of matrix/cluster-ip on node-b, as the API holds it. */
function remoteEndpoint(facts: Facts): string {
  for (const o of facts.objects) {
    const labels = o.metadata?.labels ?? {};
    if (o.kind !== 'EndpointSlice' || labels['kubernetes.io/service-name'] !== 'cluster-ip')
      continue;
    const eps = (o as { endpoints?: { addresses: string[]; nodeName?: string }[] }).endpoints;
    const ep = eps?.find((e) => e.nodeName === 'node-b');
    if (ep) return ep.addresses[0]!;
  }
  return assert.fail('matrix/cluster-ip has no endpoint on node-b');
}

interface Fault {
  name: string;
  /** The Service port whose packets the fault refuses. */
  port: string;
  /** Changes the table; the item added, whose line the finding must name (none: a policy). */
  edit: (json: Listing, facts: Facts) => Item | undefined;
  /** The words naming what refused the packets. */
  names: RegExp;
}

const FAULTS: Fault[] = [
  {
    name: "a drop first in the Service's chain",
    port: PORT,
    edit: (json) => {
      const r = rule(chainOf(json, 'service', 'matrix/cluster-ip/tcp/http'), [{ drop: null }]);
      first(json, r);
      return r;
    },
    names: /dropped by service-\S+-matrix\/cluster-ip\/tcp\/http \(/,
  },
  {
    name: 'a reject in one endpoint chain (of a Service with session affinity)',
    port: 'matrix/affinity:http',
    edit: (json) => {
      const r = rule(chainOf(json, 'endpoint', 'matrix/affinity/tcp/http'), [{ reject: null }]);
      first(json, r);
      return r;
    },
    names: /rejected by endpoint-\S+-matrix\/affinity\/tcp\/http__\S+ \(/,
  },
  {
    name: "a jump to kube-proxy's reject-chain in the external chain service-nodeports leads to",
    port: 'matrix/node-port:http',
    edit: (json) => {
      const r = rule(chainOf(json, 'external', 'matrix/node-port/tcp/http'), [
        { jump: { target: 'reject-chain' } },
      ]);
      first(json, r);
      return r;
    },
    names: /rejected by external-\S+-matrix\/node-port\/tcp\/http \(.*\), then reject-chain \(/,
  },
  {
    name: "a drop of an endpoint's address in kube-proxy's filter-forward",
    port: PORT,
    edit: (json, facts) => {
      const r = rule('filter-forward', [
        {
          match: {
            op: '==',
            left: { payload: { protocol: 'ip', field: 'daddr' } },
            right: remoteEndpoint(facts),
          },
        },
        { drop: null },
      ]);
      first(json, r);
      return r;
    },
    names: /dropped by filter-forward \(/,
  },
  {
    name: "kube-proxy's filter-forward with policy drop",
    port: PORT,
    edit: (json) => {
      const c = json.nftables.find((o) => o['chain']?.name === 'filter-forward')!['chain']!;
      c.policy = 'drop';
      return undefined;
    },
    names: /dropped by filter-forward's policy drop/,
  },
];

/** The listing as `jq '.'`-like lines: one top-level object a line. */
const lined = (json: Listing) =>
  `{"nftables": [\n${json.nftables.map((x) => JSON.stringify(x)).join(',\n')}\n]}\n`;

function drift(facts: Facts, stem: string, text: string) {
  const fx = structuredClone(facts);
  const node = fx.nodes[NODE]!;
  delete node[STEM.json];
  node[stem] = text;
  return new Analysis(fx, { code: allModes }).node(NODE).drift();
}

const said = (d: ReturnType<typeof drift>) =>
  d.findings.map((f) => `${severityOf(f)} ${f.id} ${f.service ?? ''}`).join('\n');

for (const minor of [31, 37])
  describe(`nftables drift on kube-proxy v1.${minor}'s real table: a Service port's traffic refused is an error`, async () => {
    const facts = await readSnapshot(join(FIXTURES, String(minor), 'nftables'));
    const recorded = facts.nodes[NODE]![STEM.json]!;

    it('the table as recorded: no error, nothing diverted', () => {
      const d = drift(facts, STEM.json, lined(JSON.parse(recorded) as Listing));
      assert.deepEqual(
        d.findings.filter((f) => severityOf(f) === 'error'),
        [],
        said(d),
      );
    });

    for (const fault of FAULTS)
      it(`${fault.name}: service-traffic-diverted on ${fault.port}, naming what refused it`, () => {
        const json = JSON.parse(recorded) as Listing;
        const added = fault.edit(json, facts);
        const text = lined(json);
        const d = drift(facts, STEM.json, text);
        const f = d.findings.find(
          (x) => x.service === fault.port && x.id === 'service-traffic-diverted',
        );
        assert.ok(f, said(d));
        assert.equal(severityOf(f), 'error');
        assert.match(f.explanation, fault.names);
        assert.match(f.explanation, /so it never reaches the endpoints/);
        if (added) {
          // the rule added, by the line the listing holds it on
          const line = text.split('\n').indexOf(`${JSON.stringify(added)},`) + 1;
          assert.ok(line > 0);
          assert.match(f.explanation, new RegExp(`nft-ip-kube-proxy\\.txt:${line}: `));
          assert.ok(
            f.drift.actual.some((l) =>
              l.startsWith(`nodes/${NODE}/nft-ip-kube-proxy.txt:${line}: `),
            ),
          );
        }
      });
  });
