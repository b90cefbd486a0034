// Drift on a node whose nft listing holds lines kdebug could not read (test/fixtures/nft, the lab's
// node-a, edited): what those lines may hold is not said missing, what was read still differs,
// and a note names each line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../src/core/nodes/analysis.js';
import type { NodeDrift } from '../../src/core/dataplane/drift.js';
import { clusterIpObjects, labListing } from '../support/nft-lab.js';
import { allModes } from '../support/modes.js';

const SOURCE = 'nodes/node-a/nft-ip-kube-proxy-text.txt';
const ELEMENT = '10.96.33.216 . tcp . 80 : goto service-FN4G4LLS-matrix/cluster-ip/tcp/http,';
const CHAIN = 'chain service-FN4G4LLS-matrix/cluster-ip/tcp/http {';
const DNS = 'chain service-FY5PMXPG-kube-system/kube-dns/udp/dns {';
// nft prints "dnat ip to 10.244.1.9:80": this line is not what it prints, and may name an endpoint
const HAND_EDIT = '\t\tmeta l4proto tcp dnat ip to 10.244.1.9 . 80';

/** node-a's drift (the whole node) against matrix/cluster-ip with these endpoints. */
function drift(text: string, endpoints: string[]): NodeDrift {
  const nodes = { 'node-a': { 'nft-ip-kube-proxy-text': text } };
  return new Analysis({ objects: clusterIpObjects(endpoints), nodes, meta: {} }, { code: allModes })
    .node('node-a')
    .drift();
}
const ids = (d: NodeDrift) => d.findings.map((f) => f.id);
const BOTH = ['10.244.1.4', '10.244.2.2'];

describe('nftables drift with lines not read', () => {
  it('an element of service-ips not read: no element said missing; the note names its line', () => {
    const { text, at } = labListing(
      ELEMENT,
      `\t\t\t     ${ELEMENT.replace(' : ', ' quota 5 mbytes : ')}`,
    );
    const d = drift(text, BOTH);
    assert.deepEqual(ids(d), []);
    assert.equal(d.drifted, false);
    assert.deepEqual(
      d.notRead?.map((n) => n.id),
      ['table-not-captured'],
    );
    assert.ok(
      d.notRead![0]!.explanation.includes(`${SOURCE}:${at} (in map service-ips): "10.96.33.216`),
    );
    assert.deepEqual(d.notRead![0]!.drift.actual, [
      `${SOURCE}:${at}: ${ELEMENT.slice(0, -1).replace(' : ', ' quota 5 mbytes : ')}`,
    ]);
    // the element gone from the listing is missing: only what was not read is not said
    assert.deepEqual(ids(drift(labListing(ELEMENT, '').text, BOTH)), ['service-rules-missing']);
  });

  it("a line not read in the Service's chain: no endpoint said missing, a stale one still is", () => {
    const { text, at } = labListing(CHAIN, `\t${CHAIN}\n${HAND_EDIT}`);
    const three = [...BOTH, '10.244.1.9'];
    assert.deepEqual(ids(drift(text, three)), []);
    assert.match(
      drift(text, three).notRead![0]!.explanation,
      new RegExp(`:${at + 1} \\(in chain service-FN4G4LLS-matrix/cluster-ip/tcp/http\\)`),
    );
    assert.deepEqual(ids(drift(labListing(CHAIN, `\t${CHAIN}`).text, three)), ['endpoint-missing']);
    // 10.244.2.2 is in the DNAT that was read: observed, and no longer an endpoint
    assert.deepEqual(ids(drift(text, ['10.244.1.4'])), ['endpoint-stale']);
  });

  it("a line not read in another Service's chain hides nothing of this one's", () => {
    const { text } = labListing(DNS, `\t${DNS}\n${HAND_EDIT}`);
    const d = drift(text, [...BOTH, '10.244.1.9']);
    assert.deepEqual(ids(d), ['endpoint-missing']);
    // the whole node's drift names every line not read
    assert.deepEqual(
      d.notRead?.map((n) => n.id),
      ['table-not-captured'],
    );
  });

  it('a line not read in a chain every Service passes: none of its rules said missing', () => {
    const { text } = labListing('jump services', '\t\tjmp services');
    assert.deepEqual(ids(drift(text, BOTH)), []);
    assert.deepEqual(ids(drift(labListing('jump services', '').text, BOTH)), [
      'entry-jump-missing',
    ]);
  });
});
