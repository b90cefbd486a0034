// Cilium's own load-balancer script tests, as data (../shared/cilium-vectors is copied into
// test/fixtures/cilium/vectors): the objects and options of each checked state, and the frontends
// table Cilium's control plane holds there. kdebug's model of that control plane must give the
// same frontends with the same backends; its readers must read every expected listing.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setup, vectorFile as file, vectors } from '../../support/cilium-vectors.js';
import { expectedCilium } from '../../../src/core/dataplane/cilium/expected/expected.js';
import { formatAddress, frontendKey } from '../../../src/core/dataplane/cilium/read/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';

describe('Cilium vectors: the frontends table', () => {
  for (const v of vectors) {
    const table = file(v, 'expected-frontends.txt');
    if (!existsSync(table)) continue;
    it(v, () => {
      const { node, options, view } = setup(v);
      const got = expectedCilium(view, node, options).map((f) => ({
        key: frontendKey(f),
        type: f.type,
        service: f.service,
        backends: f.backends.map((b) => formatAddress(b)).sort(),
      }));
      const text = readFileSync(table, 'utf8');
      const want =
        text.trim() === ''
          ? []
          : parseCilium(text, table).frontends.map((f) => ({
              key: frontendKey(f),
              type: f.type,
              service: f.service,
              // "+ N more", or no Backends column among the script's selected ones
              backends:
                f.backendsNotShown || f.backendsUnread
                  ? 'cut'
                  : f.backends.map((b) => formatAddress(b)).sort(),
            }));
      // the columns the script selected: a table without Type or ServiceName says neither
      const shown = (k: 'type' | 'service') =>
        want.length === 0 || want.some((w) => w[k] !== undefined);
      for (const g of got) {
        if (!shown('type')) (g as { type?: string }).type = undefined;
        if (!shown('service')) (g as { service?: string }).service = undefined;
      }
      const sort = <T extends { key: string }>(a: T[]) =>
        [...a].sort((x, y) => x.key.localeCompare(y.key));
      const cut = new Set(want.filter((w) => w.backends === 'cut').map((w) => w.key));
      assert.deepEqual(
        sort(got).map((g) => (cut.has(g.key) ? { ...g, backends: 'cut' } : g)),
        sort(want),
      );
    });
  }
});

describe('Cilium vectors: each backend state', () => {
  let compared = 0;
  for (const v of vectors) {
    const table = file(v, 'expected-backends.txt');
    if (!existsSync(table) || readFileSync(table, 'utf8').trim() === '') continue;
    it(v, () => {
      const { node, options, view } = setup(v);
      const states = parseCilium(readFileSync(table, 'utf8'), table).backendStates!;
      const got = expectedCilium(view, node, options).flatMap((f) => f.backends);
      for (const b of got) {
        const want = states.get(formatAddress(b));
        // quarantine comes from the agent's own health checks, not from the objects
        if (want === 'quarantined') continue;
        assert.equal(b.state, want, `${formatAddress(b)} in ${v}`);
        compared++;
      }
    });
  }
  it('compares the states of the backends the frontends select', () =>
    assert.ok(compared >= 60, `${compared}`));
});
