// The Services table each of Cilium's own script tests checks (`db/show services`: a row per
// Service with its port names, traffic policies and flags; 1.17 with a column per property)
// against kdebug's frontends for it and the vector's frontends table. kdebug reads no such
// listing of the agent (it names no frontend or backend): the table is read here, as data.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  expectedCilium,
  type ExpectedFrontend,
} from '../../../src/core/dataplane/cilium/expected/expected.js';
import { isDropEntry } from '../../../src/core/dataplane/cilium/read/listing.js';
import { expectedMaps } from '../../../src/core/dataplane/cilium/maps/expected.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { pasteKind } from '../../../src/core/dataplane/paste/paste.js';
import { listing, setup, vectors } from '../../support/cilium-vectors.js';

/** A db/show table: each cell starts where its title does. */
function rows(text: string): Record<string, string>[] {
  const [header, ...lines] = text.split('\n').filter((l) => l.trim() !== '');
  const cols = [...(header ?? '').matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index }));
  return lines.map((l) =>
    Object.fromEntries(
      cols.map((c, i) => [c.name, l.slice(c.at, cols[i + 1]?.at ?? l.length).trim()]),
    ),
  );
}

/** "http=80, https=443", "SessionAffinity=42s, SourceRanges=10.0.0.0/8, 10.1.0.0/16": a CIDR
 * after a comma continues the key before it. */
function pairs(cell: string | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let last: string[] | undefined;
  for (const part of (cell ?? '').split(/,\s*/).filter(Boolean)) {
    const m = /^([^=]*)=(.*)$/.exec(part);
    if (m) out.set(m[1]!, (last = [m[2]!]));
    else last?.push(part);
  }
  return out;
}

/** Ext and Int traffic policy: "Local", "Ext=Cluster, Int=Local", or 1.17's two columns. */
function policies(r: Record<string, string>): { ext: string; int: string } {
  if (r['ExtTrafficPolicy'] !== undefined)
    return { ext: r['ExtTrafficPolicy'], int: r['IntTrafficPolicy']! };
  const both = pairs(r['TrafficPolicy']);
  if (both.size === 0) return { ext: r['TrafficPolicy']!, int: r['TrafficPolicy']! };
  return { ext: both.get('Ext')![0]!, int: both.get('Int')![0]! };
}

// Flags whose agreement is shown elsewhere or not modelled, with why.
const NOT_COMPARED: Record<string, string> = {
  TrafficDistribution: 'its effect, the zone-hint selection, is compared with the frontends table',
  LoadBalancerClass: 'Cilium programs the LoadBalancer IPs whatever the class (vector 07)',
};

describe("Cilium vectors: the Services table agrees with kdebug's frontends", () => {
  let compared = 0;
  let healthChecked = 0;
  for (const v of vectors) {
    const text = listing(v, 'expected-services.txt');
    if (text === undefined) continue;
    it(v, () => {
      const s = setup(v);
      const expected = expectedCilium(s.view, s.node, s.options);
      const maps = expectedMaps(expected, { services: s.view.services, ...s.maps });
      const table = listing(v, 'expected-frontends.txt');
      const listed = table?.trim() ? parseCilium(table, v).frontends : [];
      const services = rows(text);
      // a Service of the API's: not one made from a Pod's host port nor Cilium's own
      const named = services.filter(
        (r) => r['Source'] !== 'local' && !/:host-port:/.test(r['Name']!),
      );
      // every Service with a frontend is in the table (a host port's by its own name), and every
      // row is one kdebug takes
      // (a frontends table without the ServiceName column names none)
      const withFrontends = new Set([...expected, ...listed].flatMap((f) => f.service ?? []));
      for (const name of withFrontends)
        assert.ok(
          services.some((r) => r['Name'] === name),
          name,
        );
      for (const r of named) {
        const name = r['Name']!;
        const svc = s.view.services.find((x) => `${x.namespace}/${x.name}` === name);
        assert.ok(svc, name);
        const fes = expected.filter((f) => f.service === name);
        // a headless Service is in the table, with no frontend
        const headless =
          svc.headless ||
          svc.clusterIP?.toLowerCase() === 'none' ||
          'service.kubernetes.io/headless' in (svc.raw.metadata?.labels ?? {});
        assert.equal(withFrontends.has(name), !headless, name);
        if (r['PortNames'] !== undefined) {
          const ports = pairs(r['PortNames']);
          assert.deepEqual(
            [...ports].map(([n, [p]]) => `${n}=${p}`).sort(),
            svc.ports.map((p) => `${p.name ?? ''}=${p.port}`).sort(),
          );
          for (const f of fes) assert.deepEqual(ports.get(f.portName), [String(f.servicePort)]);
        }
        if (r['TrafficPolicy'] !== undefined || r['ExtTrafficPolicy'] !== undefined) {
          const { ext, int } = policies(r);
          const scoped = (f: ExpectedFrontend) => f.type === 'ClusterIP' || f.internal === true;
          for (const f of fes)
            assert.equal(f.localOnly, (scoped(f) ? int : ext) === 'Local', `${name} ${f.ip}`);
          // an internal scope exactly where one policy only is Local
          if (fes.some((f) => f.type !== 'ClusterIP'))
            assert.equal(
              fes.some((f) => f.internal),
              ext !== int,
              name,
            );
        }
        const flags = pairs(r['Flags']);
        for (const k of flags.keys())
          assert.ok(
            k in NOT_COMPARED ||
              [
                'SessionAffinity',
                'SourceRanges',
                'SourceRangesPolicy',
                'ExplicitLBAlgorithm',
                'ForwardingMode',
                'HealthCheckNodePort',
              ].includes(k),
            `${name}: flag ${k} neither compared nor said why not`,
          );
        // the health server's frontend, on the health check node port, where the harness has it
        const hc = flags.get('HealthCheckNodePort')?.[0] ?? r['HealthCheckNodePort'];
        const health = expected.filter((f) => f.service === `${name}:healthserver`);
        const served = s.options.healthCheckLoadBalancerIP && !!hc && hc !== '0';
        assert.equal(health.length > 0, served, name);
        for (const f of health) assert.equal(String(f.port), hc);
        const own = services.find((x) => x['Name'] === `${name}:healthserver`);
        assert.equal(own !== undefined, served, name);
        if (own) assert.deepEqual(policies(own), { ext: 'Local', int: 'Local' });
        healthChecked += Number(served);
        const affinity = flags.get('SessionAffinity')?.[0] ?? r['SessionAffinity'];
        for (const f of fes)
          assert.equal(
            f.affinitySeconds,
            affinity ? Number(/^(\d+)s$/.exec(affinity)![1]) : undefined,
          );
        const cell = flags.get('SourceRanges') ?? (r['SourceRanges'] ? [r['SourceRanges']] : []);
        const ranges = cell.length ? [...cell].sort() : undefined;
        // on the frontend types the release's ranges guard (all of them before 1.18.6)
        const types = s.options.sourceRangeTypes;
        for (const f of fes)
          assert.deepEqual(
            f.sourceRanges && [...f.sourceRanges].sort(),
            types === 'all' || types.includes(f.type) ? ranges : undefined,
            `${name} ${f.type}`,
          );
        // a VIP's wildcard drop entry (1.19 on) carries its type only
        const entries = maps.filter((e) => e.frontend.service === name && !isDropEntry(e.frontend));
        for (const e of entries) {
          assert.equal(
            e.flags.includes('deny'),
            !!e.frontend.sourceRanges && flags.get('SourceRangesPolicy')?.[0] === 'deny',
          );
          assert.equal(e.algorithm, flags.get('ExplicitLBAlgorithm')?.[0]);
          if (flags.has('ForwardingMode'))
            assert.equal(e.flags.includes('dsr'), flags.get('ForwardingMode')![0] === 'dsr');
        }
        compared++;
      }
    });
  }
  it("kdebug's reader says what the table is, rather than reading it", () => {
    for (const v of ['01-v117-nodeport-two-services', '03-v118-clusterip-session-affinity']) {
      const text = listing(v, 'expected-services.txt')!;
      assert.equal(pasteKind(text), 'cilium');
      assert.throws(
        () => parseCilium(text, 'services.txt'),
        /^CiliumParseError: services\.txt:1: Cilium's Services table \(db\/show services\)/,
      );
    }
  });

  it('compares the rows of every Service kdebug models', () => {
    assert.ok(compared >= 20, `${compared}`);
    assert.ok(healthChecked >= 1, `${healthChecked}`);
  });
});
