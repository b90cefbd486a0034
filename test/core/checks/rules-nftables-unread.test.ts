// The Rules step on a node whose nft listing holds lines kdebug could not read (the lab's node-a,
// edited): each line that may bear on the Service is said as not observed, FILE:LINE, and keeps
// the Service from a bare pass there; a line that cannot bear on it does not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import type { Finding } from '../../../src/core/model.js';
import { clusterIpObjects, labListing } from '../../support/nft-lab.js';
import { facts, ids, run } from './builders.js';

const SOURCE = 'nodes/node-a/nft-ip-kube-proxy-text.txt';
const TARGET = { namespace: 'matrix', service: 'cluster-ip' };
const BOTH = ['10.244.1.4', '10.244.2.2'];
const ELEMENT = '10.96.33.216 . tcp . 80 : goto service-FN4G4LLS-matrix/cluster-ip/tcp/http,';
const CHAIN = 'chain service-FN4G4LLS-matrix/cluster-ip/tcp/http {';
// nft prints "dnat ip to 10.244.1.9:80": a hand edit, not read
const HAND_EDIT = '\t\tmeta l4proto tcp dnat ip to 10.244.1.9 . 80';

const step = (text: string, endpoints = BOTH) =>
  run(
    rulesCheck,
    facts(clusterIpObjects(endpoints), { 'node-a': { 'nft-ip-kube-proxy-text': text } }),
    {},
    TARGET,
  );
const unseen = (f: Finding) =>
  f.evidence.filter((e) => e.kind === 'not-observed').map((e) => e.text);

describe('the Rules step on an nft listing with lines not read', () => {
  it("the Service's map element not read: not observed there, naming the line; no element said missing", () => {
    const { text, at } = labListing(
      ELEMENT,
      `\t\t\t     ${ELEMENT.replace(' : ', ' quota 5 mbytes : ')}`,
    );
    const found = step(text);
    assert.deepEqual(ids(found), ['rules-nftables-not-observed:skip']);
    assert.equal(found[0]!.node, 'node-a');
    assert.deepEqual(unseen(found[0]!).length, 1);
    assert.ok(
      unseen(found[0]!)[0]!.startsWith(`${SOURCE}:${at} (in map service-ips): "10.96.33.216`),
    );
  });

  it("a line not read in the Service's chain: its endpoints shown, the pass not bare", () => {
    const { text, at } = labListing(CHAIN, `\t${CHAIN}\n${HAND_EDIT}`);
    const found = step(text);
    assert.deepEqual(ids(found), ['rules-match:skip']);
    assert.match(
      found[0]!.title,
      new RegExp(`not observed: ${SOURCE}:${at + 1} \\(in chain service-FN4G4LLS-`),
    );
    // what was read is still observed: the DNAT to each endpoint
    assert.ok(
      found[0]!.evidence.some((e) => e.kind === 'observed' && /10\.244\.2\.2/.test(e.text)),
    );
    // a stale endpoint in what was read fails; the line not read is said beside it
    assert.deepEqual(ids(step(text, ['10.244.1.4'])), [
      'endpoint-stale:fail',
      'rules-nftables-not-observed:skip',
    ]);
  });

  it("a line not read in another Service's chain leaves this one's pass", () => {
    const dns = 'chain service-FY5PMXPG-kube-system/kube-dns/udp/dns {';
    assert.deepEqual(ids(step(labListing(dns, `\t${dns}\n${HAND_EDIT}`).text)), [
      'rules-match:pass',
    ]);
  });
});
