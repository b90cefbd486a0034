// The Trace screen on a node port the node's rules still hold for a Service port the API no longer
// gives it says so, in the sentence `kdebug trace` uses (test/cli/trust-leftovers.test.ts): the
// demo's nodeport-local-no-endpoint with nginx-svc made ClusterIP in its objects.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { analyze } from '../../src/tui/data.js';
import { Trace, traceModel } from '../../src/tui/screens/Trace.js';
import { cursorKey, initialState } from '../../src/tui/state.js';
import { frame, renderPlain, settle } from './harness.js';
import { allModes } from '../support/modes.js';

/** The Trace screen's walk pane at 200 columns, from the source and to the destination whose
 * labels match. */
async function walkPane(facts: Facts, from: RegExp, to: RegExp): Promise<string> {
  const data = analyze({ facts, code: allModes });
  const base = initialState('trace');
  const first = traceModel(base, data, 200, 80);
  const source = first.sources.findIndex((s) => from.test(s.label));
  assert.ok(source >= 0, first.sources.map((s) => s.label).join('\n'));
  const picked = { ...base, cursor: { ...base.cursor, [cursorKey('trace', 0)]: source } };
  const dests = traceModel(picked, data, 200, 80).dests;
  const dest = dests.findIndex((d) => to.test(d.label));
  assert.ok(dest >= 0, dests.map((d) => d.label).join('\n'));
  const state = { ...picked, cursor: { ...picked.cursor, [cursorKey('trace', 1)]: dest } };
  const r = renderPlain(<Trace model={traceModel(state, data, 200, 80)} state={state} />);
  await settle();
  const out = frame(r).replace(/[┃│]/g, ' ').replace(/\s+/g, ' ');
  r.unmount();
  return out;
}

const snapshot = () =>
  readSnapshot(new URL('../../snapshots/nodeport-local-no-endpoint', import.meta.url).pathname);

const STALE =
  "The node's rules are stale for this port: on node vm-12-7-centos, node port 30080/tcp leads to default/nginx-svc:http, but in the API default/nginx-svc:http has no node port (Service type ClusterIP). kube-proxy has not applied that change there (drift: entry-stale)";

describe('the Trace screen on a node port the API removed', () => {
  // before: the walk by node port 30080 showed its DNAT and nothing of the API's Service
  it('says the port is stale, as kdebug trace does', async () => {
    const facts = await snapshot();
    const svc = (facts.objects as KubeObject[]).find(
      (o) => o.kind === 'Service' && o.metadata?.name === 'nginx-svc',
    ) as KubeObject & { spec: { type: string; ports: { nodePort?: number }[] } };
    svc.spec.type = 'ClusterIP';
    for (const p of svc.spec.ports) delete p.nodePort;
    const out = await walkPane(facts, /^outside, via vm-12-7-centos/, /^10\.0\.12\.7:30080\/tcp/);
    assert.ok(out.includes(STALE), out);
    // the walk itself is still shown as the node's rules do it
    assert.match(out, /DNAT to 10\.244\.0\.3:80/);
  });

  it('says nothing where the API still gives the Service that node port', async () => {
    const out = await walkPane(
      await snapshot(),
      /^outside, via vm-12-7-centos/,
      /^10\.0\.12\.7:30080\/tcp/,
    );
    assert.match(out, /DNAT to 10\.244\.0\.3:80/);
    assert.doesNotMatch(out, /stale for this port/);
  });
});
