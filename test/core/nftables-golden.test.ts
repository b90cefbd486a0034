// Goldens of the nftables table kdebug expects kube-proxy to write: a small one (the objects of
// kube-proxy's TestOverallNFTablesRules) and a large generated one (120 Services of every shape:
// ClusterIP, NodePort, LoadBalancer with and without source ranges, both traffic policies,
// session affinity, no endpoints, udp and sctp), each also loaded into the real nft and compared
// clean with itself through nft's JSON listing. A changed golden is read, then accepted with
// KDEBUG_UPDATE_GOLDEN=1.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { expectedRules, type ExpectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView, serviceCIDRs } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { nftablesDrift } from '../../src/core/dataplane/nftables/drift.js';
import {
  expectedNftCommands,
  expectedNftScript,
  expectedNftTable,
  expectedNftText,
} from '../../src/core/dataplane/nftables/expected/expected.js';
import { firewallSources } from '../../src/core/dataplane/nftables/expected/port-script.js';
import { type NftTable } from '../../src/core/dataplane/nftables/read/listing.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { MODELLED } from '../../src/core/dataplane/kube-proxy/releases.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import {
  intervalSources,
  nftPortChainNames,
  nftPortPlans,
} from '../../src/core/dataplane/nftables/expected/expected-ports.js';
import { ruleText } from '../../src/core/dataplane/nftables/render.js';
import { aService, anEndpointSlice, type ServiceOptions } from '../support/builders.js';
import { golden } from '../support/golden.js';
import { NODE, objects, objectsV6 } from '../support/nft-overall.js';
import { hasCommand, skipWithout } from '../support/skip.js';

/** 120 Services cycling through the shapes, 0-4 endpoints each, half of them on this node. */
function generated(): KubeObject[] {
  const out: KubeObject[] = objects.filter(
    (o) => o.kind !== 'Service' && o.kind !== 'EndpointSlice',
  );
  const shapes: ServiceOptions[] = [
    {},
    { type: 'NodePort' },
    { type: 'NodePort', externalTrafficPolicy: 'Local' },
    { type: 'LoadBalancer', sourceRanges: ['203.0.113.0/25', '192.168.0.0/16'] },
    { type: 'LoadBalancer', externalTrafficPolicy: 'Local' },
    { internalTrafficPolicy: 'Local' },
    { affinity: 600 },
    { externalIPs: ['192.168.99.50'] },
  ];
  for (let s = 0; s < 120; s++) {
    const shape = shapes[s % shapes.length]!;
    const proto = ['TCP', 'UDP', 'SCTP'][s % 3]!;
    const nodePort = shape.type ? 30000 + s : undefined;
    const id = `ns${s % 7}/svc-${s}`;
    out.push(
      aService(id, {
        ...shape,
        clusterIP: `172.30.${Math.floor(s / 200)}.${(s % 200) + 20}`,
        ports: [['p', 80 + (s % 5), proto, nodePort]],
        ...(shape.type === 'LoadBalancer' ? { loadBalancerIPs: [`5.6.${s}.8`] } : {}),
      }),
      anEndpointSlice(
        id,
        Array.from({ length: s % 5 }, (_, e) => [
          `10.180.${e % 2}.${s}`,
          { node: e % 2 === 0 ? NODE : 'other-node' },
        ]),
        [['p', 8080 + (s % 5), proto]],
      ),
    );
  }
  return out;
}

const text = (objs: KubeObject[]) => {
  const view = clusterView(objs);
  return expectedNftText(expectedRules(view, NODE), serviceCIDRs(view));
};
const small = () => text(objects);
const large = () => text(generated());

describe('the expected nftables table, as goldens', () => {
  it('small: the objects of kube-proxy TestOverallNFTablesRules', () => {
    golden('test/golden/expect/nft-overall.nft', small());
  });

  it('large: 120 generated Services of every shape', () => {
    golden('test/golden/expect/nft-generated.nft', large());
  });
});

const why =
  hasCommand('nft') && hasCommand('unshare') ? '' : 'nft and unshare (nftables, util-linux)';
describe('the golden nftables tables in the real nft', skipWithout(why), () => {
  for (const [what, objs] of [
    ['small', objects],
    ['large', generated()],
  ] as const)
    it(`${what}: loads with nft -f and compares clean with itself through nft -j`, () => {
      const view = clusterView(objs);
      const exp = expectedRules(view, NODE);
      const r = spawnSync(
        'unshare',
        ['-n', 'sh', '-c', 'nft -f - && nft -j list table ip kube-proxy'],
        {
          input: expectedNftText(exp, serviceCIDRs(view)),
          encoding: 'utf8',
          maxBuffer: 1 << 28,
        },
      );
      assert.equal(r.status, 0, r.stderr);
      const table = parseNftJson(r.stdout).tables[0]!;
      const lb = new Set(view.services.flatMap((s) => s.loadBalancerIPs));
      const found = nftablesDrift({
        node: NODE,
        source: 'nft -j list table ip kube-proxy',
        expected: exp,
        serviceCIDRs: serviceCIDRs(view),
        table,
        trees: buildNftServiceTrees(table, { loadBalancerIPs: lb }),
        scoped: false,
      }).findings;
      assert.deepEqual(
        found.map((f) => `${f.id} ${f.service ?? ''}: ${f.title}`),
        [],
      );
    });
});

/** Each Service port's plan (what drift compares the node's trees with) is what the trees of
 * the script's own table say of that port; and the port's chains are the table's. */
function samePlans(exp: ExpectedRules, cidrs: string[], what: string): void {
  const table = expectedNftTable(expectedNftCommands(exp, cidrs));
  const lbIPs = new Set(exp.servicePorts.flatMap((sp) => sp.loadBalancerIPs));
  const trees = buildNftServiceTrees(table, { loadBalancerIPs: lbIPs });
  const byName = new Map(trees.services.map((t) => [t.name, t]));
  const fixed = new Set(
    expectedNftTable(expectedNftCommands(exp, cidrs, { fixedOnly: true })).chains.map(
      (c) => c.name,
    ),
  );
  const owned = new Set<string>();
  for (const [sp, plan] of nftPortPlans(exp.servicePorts, lbIPs)) {
    const t = byName.get(sp.name)!;
    const fw = t.chains.fw ? table.chain(t.chains.fw)!.rules : [];
    assert.deepEqual(
      plan,
      {
        entries: t.entries.map(({ kind, address, port, protocol, chain, from }) => ({
          kind,
          address,
          port,
          protocol,
          chain,
          from,
        })),
        verdicts: t.verdicts.map(({ kind, chain, address, port }) => ({
          kind,
          chain,
          address,
          port,
        })),
        chains: t.chains,
        endpoints: t.endpoints.map((e) => e.address),
        localEndpoints: (t.localEndpoints ?? []).map((e) => e.address),
        ...(t.affinitySeconds !== undefined ? { affinitySeconds: t.affinitySeconds } : {}),
        externalMasquerade: t.masquerade
          .filter((m) => m.chain === t.chains.ext)
          .map((m) => m.condition),
      },
      `${what} ${sp.name}`,
    );
    if (plan.chains.fw) {
      const words = fw.flatMap((r) => ruleText(r).split(/[\s{},]+/));
      const addresses = words.filter((w) =>
        /^[\d.]+(\/\d+)?$|^[\da-f:]*:[\da-f:]*(\/\d+)?$/i.test(w),
      );
      assert.deepEqual(intervalSources(addresses), intervalSources(firewallSources(sp, exp)));
    }
    for (const c of nftPortChainNames(sp, exp)) owned.add(c);
  }
  assert.deepEqual(
    table.chains
      .map((c) => c.name)
      .filter((c) => !fixed.has(c))
      .sort(),
    [...owned].sort(),
    `${what}: the chains of the Service ports`,
  );
}

/** A table's contents, without its lookups. */
/** A table's contents; the script's named counters (1.37's localhost node-port rejects) are lines
 * the reader says it did not read, and the table built from the commands leaves out: no routing
 * fact is in them. */
const contents = ({ chain: _c, set: _s, unread, ...t }: NftTable) => {
  const read = (unread ?? []).filter((u) => !u.text.startsWith('add counter '));
  // the script's lines its rules and elements were read from: the built table has none
  const unlined = {
    ...t,
    chains: t.chains.map((c) => ({ ...c, rules: c.rules.map(({ line: _l, ...r }) => r) })),
    sets: t.sets.map((x) => ({ ...x, elements: x.elements.map(({ line: _l, ...e }) => e) })),
  };
  return read.length > 0 ? { ...unlined, unread: read } : unlined;
};

describe("the table drift builds from the script's commands is the one nft builds from its lines", () => {
  // every modelled release, both masquerade configurations, node-port addresses and local
  // detectors; a Service of two ports adds its cluster IP twice (nft keeps one element); a
  // Service lists its own cluster IP as an external IP, another lists svc-1's (udp 81)
  const view = clusterView([
    ...generated(),
    aService('ns9/own-vip', { clusterIP: '172.30.9.10', externalIPs: ['172.30.9.10'] }),
    anEndpointSlice('ns9/own-vip', [['10.180.9.10', { node: NODE }]]),
    aService('ns9/others-vip', {
      clusterIP: '172.30.9.11',
      externalIPs: ['172.30.0.21'],
      ports: [['p', 81, 'UDP']],
    }),
    anEndpointSlice(
      'ns9/others-vip',
      [['10.180.9.11', { node: 'other-node' }]],
      [['p', 8081, 'UDP']],
    ),
    aService('ns9/two-ports', {
      clusterIP: '172.30.9.9',
      externalIPs: ['192.168.99.50'],
      ports: [
        ['a', 80],
        ['b', 81],
      ],
    }),
    anEndpointSlice(
      'ns9/two-ports',
      [['10.180.9.9', { node: NODE }]],
      [
        ['a', 8080],
        ['b', 8081],
      ],
    ),
  ]);
  const base = expectedRules(view, NODE).config;
  const configs = [
    base,
    { ...base, masqueradeAll: true },
    { ...base, nodePortAddresses: ['0.0.0.0/0'] },
    { ...base, detectLocalMode: 'InterfaceNamePrefix', interfaceNamePrefix: 'veth' },
  ];
  for (const { minor } of MODELLED)
    it(`v1.${minor}`, () => {
      for (const config of configs) {
        const exp = expectedRules(view, NODE, { release: { minor }, config });
        const cidrs = serviceCIDRs(view);
        const read = parseNftScript(expectedNftScript(exp, cidrs).join('\n')).tables[0]!;
        const built = expectedNftTable(expectedNftCommands(exp, cidrs));
        assert.deepEqual(contents(built), contents(read), `${config.source} ${minor}`);
        samePlans(exp, cidrs, `${config.source} ${minor}`);
      }
      // the ip6 table: kube-proxy's own IPv6 test objects
      const v6 = clusterView(objectsV6);
      const exp = expectedRules(v6, NODE, { release: { minor }, family: 'IPv6' });
      const read = parseNftScript(expectedNftScript(exp, serviceCIDRs(v6)).join('\n')).tables[0]!;
      const built = expectedNftTable(expectedNftCommands(exp, serviceCIDRs(v6)));
      assert.equal(built.family, 'ip6');
      assert.deepEqual(contents(built), contents(read));
      samePlans(exp, serviceCIDRs(v6), `IPv6 ${minor}`);
    });
});
