// The Rules screen says why a node's rules show no Service as `rules` does: an IPVS-mode nat
// table holds KUBE-SERVICES with no per-Service entries, not "no KUBE-SERVICES entries".
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { analyze } from '../../src/tui/data.js';
import { Rules, rulesModel } from '../../src/tui/screens/Rules.js';
import { initialState } from '../../src/tui/state.js';
import { frame, renderPlain } from '../tui/harness.js';
import { allModes } from '../support/modes.js';

describe('the Rules screen of an IPVS-mode nat table', () => {
  it('says KUBE-SERVICES holds no per-Service entries as IPVS mode writes it', () => {
    const text = readFileSync(
      new URL(
        '../../snapshots/ipvs-stale-real-server/nodes/vm-12-7-centos/iptables-save.txt',
        import.meta.url,
      ),
      'utf8',
    );
    const data = analyze(
      { facts: { objects: [], nodes: {}, meta: {} }, code: allModes },
      { rules: { label: 'p.txt', text } },
    );
    const state = initialState('rules');
    const r = renderPlain(
      <Rules model={rulesModel(state, data.nodes, undefined, 120, 30)} state={state} />,
    );
    const f = frame(r).replace(/[\s│┃]+/g, ' ');
    r.unmount();
    assert.ok(
      f.includes(
        "the paste's KUBE-SERVICES holds no per-Service entries, as kube-proxy's IPVS mode writes it",
      ),
      f,
    );
    assert.doesNotMatch(f, /no KUBE-SERVICES entries/);
  });
});
