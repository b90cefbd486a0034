// The Trace screen on a Cilium node says where the walk enters as the node's mode does (issue 34,
// r153-4: it said "nat PREROUTING" for every mode): the trace result's own `enters`, the words
// `kdebug trace` prints, not a switch of the TUI's. The bundled snapshots/cilium-stale-backend.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { analyze } from '../../src/tui/data.js';
import { Trace, traceModel } from '../../src/tui/screens/Trace.js';
import { cursorKey, initialState } from '../../src/tui/state.js';
import { frame, renderPlain, settle } from './harness.js';
import { allModes } from '../support/modes.js';
import { kdebug } from '../support/cli.js';

const DIR = new URL('../../snapshots/cilium-stale-backend', import.meta.url).pathname;

describe('the Trace screen on a Cilium node', () => {
  it("says the walk enters at Cilium's socket hook, as kdebug trace does", async () => {
    const data = analyze({ facts: await readSnapshot(DIR), code: allModes });
    const base = initialState('trace');
    const first = traceModel(base, data, 200, 80);
    const source = first.sources.findIndex((s) => s.kind === 'pod');
    assert.ok(source >= 0, first.sources.map((s) => s.label).join('\n'));
    const picked = { ...base, cursor: { ...base.cursor, [cursorKey('trace', 0)]: source } };
    const dests = traceModel(picked, data, 200, 80).dests;
    const dest = dests.findIndex((d) => /nginx-svc/.test(d.label));
    assert.ok(dest >= 0, dests.map((d) => d.label).join('\n'));
    const state = { ...picked, cursor: { ...picked.cursor, [cursorKey('trace', 1)]: dest } };
    const model = traceModel(state, data, 200, 80);
    const r = renderPlain(<Trace model={model} state={state} />);
    await settle();
    const out = frame(r).replace(/[┃│]/g, ' ').replace(/\s+/g, ' ');
    r.unmount();
    const s = model.sources[model.source]!;
    const d = model.dests[model.dest]!;
    // the CLI's own words for the same packet
    const cli = JSON.parse(
      kdebug([
        'trace',
        '--snapshot',
        DIR,
        '--node',
        s.node,
        '--src',
        s.ip,
        '--dst',
        `${d.ip}:${d.port}`,
        '-o',
        'json',
      ]).stdout,
    ) as { packet: { enters: string } };
    assert.match(cli.packet.enters, /socket hook/);
    assert.ok(out.includes(`from a Pod (${cli.packet.enters})`), out.slice(0, 400));
    assert.doesNotMatch(out, /nat PREROUTING/);
  });
});
