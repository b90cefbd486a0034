// The Drift screen on a node whose nft listing holds a line kdebug could not read (the lab's
// node-a, the Service's map element edited): no "no drift" of the whole node, but of what was
// read, with the line named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyze } from '../../src/tui/data.js';
import { Drift, driftModel } from '../../src/tui/screens/Drift.js';
import { initialState } from '../../src/tui/state.js';
import { clusterIpObjects, labListing } from '../support/nft-lab.js';
import { frame, renderPlain, settle } from './harness.js';
import { allModes } from '../support/modes.js';

const ELEMENT = '10.96.33.216 . tcp . 80 : goto service-FN4G4LLS-matrix/cluster-ip/tcp/http,';

/** The Drift screen's text for node-a's listing, at 200 columns (no line wraps the file). */
async function screen(text: string, endpoints = ['10.244.1.4', '10.244.2.2']): Promise<string> {
  const objects = clusterIpObjects(endpoints);
  const nodes = { 'node-a': { 'nft-ip-kube-proxy-text': text } };
  const data = analyze({ facts: { objects, nodes, meta: {} }, code: allModes });
  const r = renderPlain(<Drift model={driftModel(initialState('drift'), data.nodes, 200, 20)} />);
  await settle();
  const out = frame(r);
  r.unmount();
  return out;
}

describe('the Drift screen with a line of the nft listing not read', () => {
  it('says no drift in what was read, and the line; a whole listing says no drift', async () => {
    const { text, at } = labListing(
      ELEMENT,
      `\t\t\t     ${ELEMENT.replace(' : ', ' quota 5 mbytes : ')}`,
    );
    const out = await screen(text);
    assert.match(out, /no drift in what was read on node-a/);
    assert.ok(out.includes(`nft-ip-kube-proxy-text.txt:${at} (in map service-ips)`));
    assert.doesNotMatch(out, /what kube-proxy writes/);
    assert.match(
      await screen(labListing(ELEMENT, `\t\t\t     ${ELEMENT}`).text),
      /no drift: the rules on node-a are what kube-proxy writes/,
    );
  });

  it('beside a finding, the line not read is said first', async () => {
    // a line no nft prints, in a fixed chain: the Service's own rules are still read whole
    const { text, at } = labListing(
      'ct state new jump cluster-ips-check',
      '\t\tct state new jump cluster-ips-check\n\t\tfrobnicate the packets',
    );
    // an endpoint the objects no longer hold, still in the table: a finding of what was read
    const out = await screen(text, ['10.244.1.4']);
    assert.match(out, /endpoint-stale/);
    const said = out.indexOf('not read:');
    assert.ok(said >= 0 && said < out.indexOf('endpoint-stale'), out);
    assert.ok(out.includes(`nft-ip-kube-proxy-text.txt:${at + 1}`), out);
  });
});
