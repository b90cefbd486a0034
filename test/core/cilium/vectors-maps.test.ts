// What kdebug expects Cilium's agent to write to its BPF maps (maps.ts, which `kdebug expect`
// prints as `bpf lb list`) against the maps dump each of Cilium's own script tests checks,
// compared by behaviour (test/support/cilium-maps.ts says what that is).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected/expected.js';
import { formatAddress, frontendKey } from '../../../src/core/dataplane/cilium/read/listing.js';
import { expectedMaps } from '../../../src/core/dataplane/cilium/maps/expected.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { bpfLbList } from '../../../src/core/dataplane/cilium/expected/render.js';
import { listing, setup, vectors } from '../../support/cilium-vectors.js';
import { fromDump, fromModel } from '../../support/cilium-maps.js';

// Map entries kdebug does not model, with why.
const UNMODELLED_ENTRIES: Record<string, { key: string; why: string }> = {
  '02-v117-terminating-single-backend': {
    key: '10.96.116.33:8081',
    why: "1.17's experimental control plane (opt-in) sent no new connection to a terminating backend even when none other was left; 1.18 and 1.17's default ServiceManager do, as kdebug models",
  },
};

/** The vectors whose script marks backends unhealthy (pkg/loadbalancer/tests/testdata/
 * quarantined.txtar, its backends_unhealthy.table): the ones it quarantines. */
const QUARANTINED: Record<string, string[]> = {
  '26-v118-unhealthy-backend-quarantined': ['10.244.1.2:80/TCP'],
  '83-v120-unhealthy-backend-quarantined': ['10.244.1.2:80/TCP'],
};

type Address = { ip: string; port: number; protocol?: 'tcp' | 'udp' | 'sctp' | 'any' };

describe("Cilium vectors: the BPF maps kdebug expects are the ones Cilium's tests check", () => {
  let compared = 0;
  const skipped: string[] = [];
  for (const v of vectors) {
    const dump = listing(v, 'expected-maps.txt');
    if (dump === undefined) continue;
    it(v, () => {
      const s = setup(v);
      const entries = dump === '' ? [] : parseCilium(dump, v).frontends;
      const protocols = entries.length === 0 || entries.some((f) => f.protocol !== undefined);
      const skip = new Set(UNMODELLED_ENTRIES[v] ? [UNMODELLED_ENTRIES[v].key] : []);
      // quarantine is the agent's own health checking, which only the quarantine scripts set up:
      // there, as its backends table says, or (a table of 1.19 on without the State column) the
      // backends the script quarantines; anywhere else a backend out of rotation is kdebug's to
      // explain
      const text = listing(v, 'expected-backends.txt');
      const states = text?.trim() ? parseCilium(text, v).backendStates! : new Map();
      for (const address of QUARANTINED[v] ?? []) states.set(address, 'quarantined');
      const frontends = expectedCilium(s.view, s.node, s.options).map((f) => ({
        ...f,
        backends: f.backends.map((b) =>
          states.get(formatAddress(b)) === 'quarantined'
            ? { ...b, state: 'quarantined' as const }
            : b,
        ),
      }));
      const model = expectedMaps(frontends, { services: s.view.services, ...s.maps });
      const got = model.map((e) => fromModel(e, protocols)).filter((b) => !skip.has(b.key));
      const all = entries.map((f) => fromDump(f, protocols));
      const want = all.filter((b) => !skip.has(b.key));
      skipped.push(...all.filter((b) => !want.includes(b)).map((b) => `${v} ${b.key}`));
      const order = (l: typeof got) => [...l].sort((a, b) => a.key.localeCompare(b.key));
      assert.deepEqual(order(got), order(want));
      compared += want.length;
      // and `kdebug expect` prints them so: its bpf lb list, read back, has each entry's slots
      const slots = (l: { key: string; type?: string; flags: string[]; backends: Address[] }[]) =>
        l
          .map((e) => [e.key, e.type, e.flags, e.backends.map((b) => formatAddress(b))])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      assert.deepEqual(
        slots(
          parseCilium(bpfLbList(model).join('\n'), 'expect').frontends.map((f) => ({
            ...f,
            key: frontendKey(f),
          })),
        ),
        slots(
          model.map((e) => ({
            ...e,
            key: frontendKey({ ...e.frontend, ip: e.ip }),
            type: e.frontend.type,
          })),
        ),
      );
    });
  }
  it('a backend the dump keeps out of rotation is quarantined only in the quarantine vectors', () => {
    for (const v of vectors) {
      const dump = listing(v, 'expected-maps.txt');
      if (!dump) continue;
      const out = parseCilium(dump, v).frontends.flatMap((f) =>
        f.backends
          .filter((b) => b.state === 'active' && b.inRotation === false)
          .map((b) => formatAddress({ ...b, protocol: b.protocol ?? f.protocol })),
      );
      assert.deepEqual([...new Set(out)], QUARANTINED[v] ?? [], v);
    }
  });
  it('compares every entry but the unmodelled ones', () => {
    assert.deepEqual(skipped, ['02-v117-terminating-single-backend 10.96.116.33:8081']);
    assert.ok(compared >= 60, `${compared}`);
  });
});
