// The Trace screen on a node whose listing was cut short shows where the read stopped, as
// `kdebug trace` does (the same walk, NodeAnalysis.traced): an nft walk that meets a chain past
// the cut is "not known past" it, with why; an IPVS walk says the listing's stop.
// The nft listing: the lab's node-a (support/nft-lab.ts) cut inside its chain services, so the
// chain of matrix/cluster-ip (10.96.33.216:80) is past the cut. The IPVS one: the demo's
// ipvs-stale-real-server, vm-12-7-centos's ipvsadm-save cut inside 10.1.190.219:8080's real
// servers (test/cli/ipvs-trace-cut.test.ts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { analyze } from '../../src/tui/data.js';
import { Trace, traceModel } from '../../src/tui/screens/Trace.js';
import { cursorKey, initialState } from '../../src/tui/state.js';
import { clusterIpObjects, NODE_A_TABLE } from '../support/nft-lab.js';
import { frame, renderPlain, settle } from './harness.js';
import { allModes } from '../support/modes.js';

/** The Trace screen's walk pane at 160 columns, from the source and to the destination whose
 * labels match. */
async function walkPane(facts: Facts, from: RegExp, to: RegExp): Promise<string> {
  const data = analyze({ facts, code: allModes });
  const base = initialState('trace');
  const first = traceModel(base, data, 160, 60);
  const source = first.sources.findIndex((s) => from.test(s.label));
  assert.ok(source >= 0, first.sources.map((s) => s.label).join('\n'));
  const picked = { ...base, cursor: { ...base.cursor, [cursorKey('trace', 0)]: source } };
  const dests = traceModel(picked, data, 160, 60).dests;
  const dest = dests.findIndex((d) => to.test(d.label));
  assert.ok(dest >= 0, dests.map((d) => d.label).join('\n'));
  const state = { ...picked, cursor: { ...picked.cursor, [cursorKey('trace', 1)]: dest } };
  const r = renderPlain(<Trace model={traceModel(state, data, 160, 60)} state={state} />);
  await settle();
  const out = frame(r).replace(/[┃│]/g, ' ').replace(/ +/g, ' ');
  r.unmount();
  return out;
}

describe('the Trace screen on a listing cut short', () => {
  it('nftables: the walk stops at the chain past the cut, not known past it, and says why', async () => {
    const text = readFileSync(`${NODE_A_TABLE}.txt`, 'utf8').split('\n').slice(0, 197).join('\n');
    const facts: Facts = {
      objects: clusterIpObjects(['10.244.1.4', '10.244.2.2']),
      nodes: { 'node-a': { 'nft-ip-kube-proxy-text': text, 'proxy-mode': 'nftables' } },
      meta: {},
    };
    const out = await walkPane(facts, /^outside, via node-a/, /^10\.96\.33\.216:80\/tcp/);
    const chain = 'chain service-FN4G4LLS-matrix/cluster-ip/tcp/http';
    assert.ok(out.includes(`not known past ${chain}`), out);
    assert.match(
      out,
      /the rules were not wholly read \(nodes\/node-a\/nft-ip-kube-proxy-text\.txt:197/,
    );
    assert.ok(out.includes(`stopped: it goes to ${chain}, which the listing does not hold`), out);
    // never the "routed unchanged" of a walk no rule took
    assert.doesNotMatch(out, /routed unchanged/);
  });

  it('IPVS: the stop the CLI says is said', async () => {
    const facts = await readSnapshot(
      new URL('../../snapshots/ipvs-stale-real-server', import.meta.url).pathname,
    );
    const outputs = facts.nodes['vm-12-7-centos']!;
    const lines = outputs['ipvsadm-save']!.split('\n');
    outputs['ipvsadm-save'] =
      `${lines.slice(0, 4).join('\n')}\n-a -t 10.1.190.219:8080 -r 10.244.1.8`;
    const out = await walkPane(facts, /^outside, via vm-12-7-centos/, /^10\.1\.190\.219:8080\/tcp/);
    assert.match(
      out,
      /the rules were not wholly read \(nodes\/vm-12-7-centos\/ipvsadm-save\.txt:5: the listing ends inside a real server's row/,
    );
  });
});
