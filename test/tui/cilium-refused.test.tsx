// The TUI on Cilium nodes whose agent's release refuses cilium-config as read (not ready, no
// status): node-a listed nothing of its agent (only its addresses were recorded), so its Rules
// and Drift panes say the agent does not start, and the Trace screen walks nothing there;
// node-b's agent listed its table, which is compared as usual, and the Drift pane notes that it
// would not start again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyze } from '../../src/tui/data.js';
import { Drift, driftModel } from '../../src/tui/screens/Drift.js';
import { traceSources } from '../../src/tui/screens/trace-model.js';
import { initialState } from '../../src/tui/state.js';
import { ciliumCluster } from '../core/checks/builders.js';
import { frame, renderPlain, settle } from './harness.js';
import { allModes } from '../support/modes.js';

const FRONTENDS = [
  'Address            Type       ServiceName          PortName  Backends                                  Status',
  '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       10.244.0.2:53/UDP                        Done',
  '10.96.0.50:80/TCP  ClusterIP  default/web           http      10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP  Done',
  '',
].join('\n');
const data = analyze({
  facts: {
    objects: ciliumCluster({
      'bpf-lb-acceleration': 'native',
      'node-port-acceleration': 'disabled',
    }),
    nodes: {
      'node-a': { 'ip-addr': 'eth0 UP 192.0.2.10/24\n' },
      'node-b': { 'cilium-frontends': FRONTENDS },
    },
    meta: {},
  },
  code: allModes,
});
const [a, b] = data.nodes;
const WHY = /does not start with its configuration, so it programs no Service there/;

/** The Drift screen of the `index`th node, at 200 columns. */
async function drift(index: number): Promise<string> {
  const s = { ...initialState('drift'), node: { ...initialState('drift').node, drift: index } };
  const r = renderPlain(<Drift model={driftModel(s, data.nodes, 200, 30)} />);
  await settle();
  const out = frame(r);
  r.unmount();
  return out;
}

describe('the TUI on a node whose Cilium agent does not start with its configuration', () => {
  it('Rules and Drift say the agent does not start and why; Trace walks nothing there', async () => {
    assert.equal(a?.name, 'node-a');
    // before: "no rules recorded for this node"
    assert.match(a.error ?? '', WHY);
    assert.match(a.error ?? '', /bpf-lb-acceleration and node-port-acceleration/);
    assert.match(await drift(0), WHY);
    assert.equal(a.walkable, false);
    assert.ok(traceSources(data).every((s) => s.node !== 'node-a'));
  });

  it('its listing read, Drift compares it and notes it would not start again', async () => {
    assert.equal(b?.name, 'node-b');
    const out = await drift(1);
    assert.match(out, /no drift in what was read on node-b/);
    // before: the note was not shown (the screen showed findings and what was not read only)
    assert.match(out, /note: Cilium's agent kube-system\/cilium-node-b is not ready and would not/);
    assert.ok(traceSources(data).some((s) => s.node === 'node-b'));
  });
});
