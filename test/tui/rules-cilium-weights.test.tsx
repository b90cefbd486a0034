// The Rules screen says a Cilium backend's weight and its Maglev entries as `kdebug rules` does
// (issue 34): the share alone did not say why the 70-weighted slice's backends take more.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { analyze } from '../../src/tui/data.js';
import { Rules, rulesModel } from '../../src/tui/screens/Rules.js';
import { initialState } from '../../src/tui/state.js';
import { frame, renderPlain, settle } from './harness.js';
import { allModes } from '../support/modes.js';
import { kdebug } from '../support/cli.js';
import { aCiliumAgent, aCiliumConfig } from '../support/builders.js';

/** The Rules screen's text for a Cilium node that recorded `listing` as `stem`, every tree
 * open. */
async function screen(stem: string, listing: string): Promise<string> {
  const facts = {
    objects: [aCiliumAgent('node-a', 'quay.io/cilium/cilium:v1.20.2'), aCiliumConfig()],
    nodes: { 'node-a': { [stem]: listing } },
    meta: {},
  };
  const data = analyze({ facts, code: allModes });
  const closed = rulesModel(initialState('rules'), data.nodes, undefined, 200, 60);
  const open = Object.fromEntries(
    closed.rows.filter((r) => r.kind === 'service').map((r) => [`svc:${r.tree.id}`, true]),
  );
  const state = { ...initialState('rules'), open };
  const model = rulesModel(state, data.nodes, undefined, 200, 60);
  const r = renderPlain(<Rules model={model} state={state} />);
  await settle();
  const out = frame(r);
  r.unmount();
  return out;
}

describe("the Rules screen on a Cilium node's listing", () => {
  it("vector 64's maps dump: each backend's Maglev entries, as rules --file says them", async () => {
    const file =
      'test/fixtures/cilium/vectors/64-v120-endpointslice-weights-70-30/expected-maps.txt';
    const out = await screen('cilium-bpf-lb-list', readFileSync(file, 'utf8'));
    const cli = kdebug(['rules', '--file', file]).stdout;
    for (const [address, entries] of [
      ['10.244.0.112:8081', 358],
      ['10.244.0.122:8081', 153],
    ] as const) {
      const said = `${entries} of 1021 Maglev entries`;
      assert.match(cli, new RegExp(`${address.replace(/\./g, '\\.')}\\s+\\(active, ${said}\\)`));
      assert.match(out, new RegExp(`${address.replace(/\./g, '\\.')} active, ${said}`), out);
    }
  });

  it("service list -o json: each backend's weight", async () => {
    const json = JSON.stringify([
      {
        spec: {
          id: 9,
          'frontend-address': { ip: '10.96.0.20', port: 80, protocol: 'TCP', scope: 'external' },
          'backend-addresses': [
            { ip: '10.244.2.8', port: 8080, protocol: 'TCP', state: 'active', weight: 100 },
            { ip: '10.244.2.9', port: 8080, protocol: 'TCP', state: 'active', weight: 3 },
          ],
          flags: { name: 'web', namespace: 'default', type: 'ClusterIP', trafficPolicy: 'Cluster' },
        },
      },
    ]);
    const out = await screen('cilium-service-list', json);
    assert.match(out, /10\.244\.2\.8:8080 active, weight 100/, out);
    assert.match(out, /10\.244\.2\.9:8080 active, weight 3/, out);
  });
});
