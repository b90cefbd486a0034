// Every modelled release against its TestOverallIPTablesRules payload (test/fixtures/releases/
// <minor>/, verbatim from that tag's proxier_test.go): both loaded into the real iptables of a
// network namespace of the test's own (with the nfacct counters its rules name) and saved back,
// they are the same rules, compared as kube-proxy's tests compare (truth.ts). The payload lacks
// the built-in chains' jumps and the canary (kube-proxy adds them apart), and its fake iptables
// has no --random-fully before 1.37 (which writes it unasked). IP conventions:
// test/support/ipt-overall.ts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { expectedRules, expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { MODELLED, writes } from '../../src/core/dataplane/kube-proxy/releases.js';
import { differences } from '../support/cluster/truth.js';
import { common, NODE, overall } from '../support/ipt-overall.js';
import { realIptablesMissing } from '../support/real-iptables.js';
import { skipWithout } from '../support/skip.js';

const ns = `kd-versions-${process.pid}`;
const missing = realIptablesMissing();
const inNs = (cmd: string, args: string[], input?: string) =>
  execFileSync('ip', ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8', input });
/** `text` loaded into the empty namespace and saved back. */
const roundTrip = (text: string) => {
  inNs('iptables-restore', [], '*filter\nCOMMIT\n*nat\nCOMMIT\n');
  inNs('iptables-restore', [], text);
  return inNs('iptables-save', []);
};
const BUILTIN = /^(-A |:)(INPUT|FORWARD|OUTPUT|PREROUTING|POSTROUTING|KUBE-PROXY-CANARY)\b/;
const own = (saved: string) =>
  saved
    .split('\n')
    .filter((l) => !BUILTIN.test(l))
    .join('\n');

describe(
  "kdebug expect in iptables mode, against each release's own payload",
  skipWithout(missing && `${missing} (needs root, iproute2, iptables and nfacct)`),
  () => {
    before(() => {
      execFileSync('ip', ['netns', 'add', ns]);
      for (const counter of ['ct_state_invalid_dropped_pkts', 'localhost_nps_accepted_pkts'])
        inNs('nfacct', ['add', counter]);
    });
    after(() => {
      spawnSync('ip', ['netns', 'del', ns]);
    });

    for (const release of MODELLED)
      it(`v1.${release.minor}: the same rules as its TestOverallIPTablesRules`, () => {
        const file = new URL(
          `../fixtures/releases/${release.minor}/iptables-overall.txt`,
          import.meta.url,
        );
        const theirs = own(roundTrip(readFileSync(file, 'utf8')));
        const exp = expectedRules(clusterView([...common, ...overall]), NODE, {
          release,
          // what the test's fake iptables and nfacct say (the node's rules would, on a node);
          // a release that asks whether iptables has --random-fully is told no
          nfacct: release.minor >= 31,
          ...(writes(release, 'iptablesAlwaysRandomFully') ? {} : { randomFully: false }),
        });
        const ours = own(roundTrip(expectedSave(exp, { header: false })));
        assert.deepEqual(differences(ours, theirs), []);
      });
  },
);
