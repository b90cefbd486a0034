// A node's listing of its dataplane that does not read (nftables, IPVS, Cilium): the node state
// holds one typed failure naming the file, the node command it is the output of and the line,
// and the Rules step says it in one line, worded once (couldNotRead).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import type { DumpReadFailure } from '../../../src/core/dataplane/dataplane.js';
import type { KubeObject } from '../../../src/core/model.js';
import { aCiliumAgent } from '../../support/builders.js';
import { ciliumCluster, facts, healthy, run } from './builders.js';
import { unavailableText } from '../../../src/core/nodes/drift-unavailable.js';
import { allModes } from '../../support/modes.js';

const FRONTENDS_HEADER = 'Address  Type  ServiceName  PortName  Status  Backends';
const FRONTEND = '10.96.0.50:80/TCP  ClusterIP  default/web  http  Done  10.244.0.2:8080/TCP';

const cases: {
  what: string;
  objects: () => KubeObject[];
  outputs: Record<string, string>;
  failure: DumpReadFailure;
  said: string;
}[] = [
  {
    what: 'the script kube-proxy feeds nft -f, put in a snapshot by hand, with a line of none',
    objects: healthy,
    outputs: {
      'proxy-mode': 'nftables\n',
      'nft-ip-kube-proxy': [
        'add table ip kube-proxy',
        'add chain ip kube-proxy services',
        'add nonsense ip kube-proxy x',
      ].join('\n'),
    },
    failure: {
      source: 'nodes/node-a/nft-ip-kube-proxy.txt',
      command: { kind: 'nft-list', family: 'ip' },
      line: 3,
      reason: 'not a line of an nft script: add nonsense ip kube-proxy x',
    },
    said: 'could not read nodes/node-a/nft-ip-kube-proxy.txt (nft -j list table ip kube-proxy) at line 3: not a line of an nft script: add nonsense ip kube-proxy x',
  },
  {
    what: 'an nft listing without kube-proxy’s table',
    objects: healthy,
    outputs: {
      'proxy-mode': 'nftables\n',
      'nft-ip-kube-proxy-text': 'table ip filter {\n\tchain input {\n\t}\n}\n',
    },
    failure: {
      source: 'nodes/node-a/nft-ip-kube-proxy-text.txt',
      command: { kind: 'nft-list', family: 'ip', format: 'text' },
      reason: 'it holds no table ip kube-proxy',
    },
    said: 'could not read nodes/node-a/nft-ip-kube-proxy-text.txt (nft list table ip kube-proxy): it holds no table ip kube-proxy',
  },
  {
    what: 'ipvsadm-save with a real server of no virtual server',
    objects: healthy,
    outputs: {
      'proxy-mode': 'ipvs\n',
      'ipvsadm-save': [
        '-A -t 10.96.0.1:443 -s rr',
        '-a -t 10.96.0.9:443 -r 10.244.0.5:6443 -m -w 1',
        '-A -t 10.96.0.2:443 -s rr',
      ].join('\n'),
    },
    failure: {
      source: 'nodes/node-a/ipvsadm-save.txt',
      command: { kind: 'ipvs-save' },
      line: 2,
      reason:
        'a real server of a virtual server not added before: -a -t 10.96.0.9:443 -r 10.244.0.5:6443 -m -w 1',
    },
    said: 'could not read nodes/node-a/ipvsadm-save.txt (ipvsadm-save -n) at line 2: a real server of a virtual server not added before: -a -t 10.96.0.9:443 -r 10.244.0.5:6443 -m -w 1',
  },
  {
    what: 'ipvsadm -Ln (no ipvsadm-save) with a real server before any virtual server',
    objects: healthy,
    outputs: {
      'proxy-mode': 'ipvs\n',
      'ipvsadm-list': [
        'IP Virtual Server version 1.2.1 (size=4096)',
        'Prot LocalAddress:Port Scheduler Flags',
        '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
        '  -> 10.244.0.5:6443              Masq    1      0          0',
        'TCP  10.96.0.1:443 rr',
      ].join('\n'),
    },
    failure: {
      source: 'nodes/node-a/ipvsadm-list.txt',
      command: { kind: 'ipvs-save', format: 'list' },
      line: 4,
      reason:
        'a real server before any virtual server: -> 10.244.0.5:6443              Masq    1      0          0',
    },
    said: 'could not read nodes/node-a/ipvsadm-list.txt (ipvsadm -Ln) at line 4: a real server before any virtual server: -> 10.244.0.5:6443              Masq    1      0          0',
  },
  {
    what: "the agent's frontends with a backend that is no address",
    objects: () => ciliumCluster(),
    outputs: {
      'cilium-frontends': `${FRONTENDS_HEADER}\n10.96.0.50:80/TCP  ClusterIP  default/web  http  Done  bogus\n`,
    },
    failure: {
      source: 'nodes/node-a/cilium-frontends.txt',
      command: { kind: 'cilium', list: 'frontends' },
      line: 2,
      reason: 'not a backend address: "bogus"',
    },
    said: 'could not read nodes/node-a/cilium-frontends.txt (cilium-dbg shell -- db/show frontends) at line 2: not a backend address: "bogus"',
  },
  {
    what: "the agent's frontends read, its backends not: the failure is the backends listing's",
    objects: () => ciliumCluster(),
    outputs: {
      'cilium-frontends': `${FRONTENDS_HEADER}\n${FRONTEND}\n`,
      'cilium-backends': 'no table here\n',
    },
    failure: {
      source: 'nodes/node-a/cilium-backends.txt',
      command: { kind: 'cilium', list: 'backends' },
      reason: 'not a Cilium listing (cilium-dbg service list, bpf lb list, db/show frontends)',
    },
    said: 'could not read nodes/node-a/cilium-backends.txt (cilium-dbg shell -- db/show backends): not a Cilium listing (cilium-dbg service list, bpf lb list, db/show frontends)',
  },
  {
    what: 'an agent older than cilium-dbg (1.14): its listing is named as its own binary printed it',
    objects: () => [
      ...ciliumCluster().filter((o) => o.metadata?.name !== 'cilium-node-a'),
      aCiliumAgent('node-a', 'quay.io/cilium/cilium:v1.14.5'),
    ],
    outputs: { 'cilium-service-list': 'no table here\n' },
    failure: {
      source: 'nodes/node-a/cilium-service-list.txt',
      command: { kind: 'cilium', list: 'service-list', binary: 'cilium' },
      reason: 'not a Cilium listing (cilium-dbg service list, bpf lb list, db/show frontends)',
    },
    said: 'could not read nodes/node-a/cilium-service-list.txt (cilium service list -o json): not a Cilium listing (cilium-dbg service list, bpf lb list, db/show frontends)',
  },
];

describe('a dataplane listing that does not read', () => {
  for (const c of cases)
    it(c.what, () => {
      const f = facts(c.objects(), { 'node-a': c.outputs });
      const node = new Analysis(f, { code: allModes }).node('node-a');
      assert.deepEqual(node.stateRead()?.failure, c.failure);
      // the evidence is the listing that did not read
      assert.equal(node.stateRead()?.source, c.failure.source);
      // the Rules step says it once, in one line, on the node it is about
      const unreadable = run(rulesCheck, f).filter((x) => x.id === 'rules-unreadable');
      assert.deepEqual(
        unreadable.map((x) => [x.node, x.explanation]),
        [['node-a', c.said]],
      );
      // drift (and trace) refuse the node with the same words after what was not read
      const why = node.driftUnavailable();
      const said = why ? unavailableText(node.name, why) : '';
      assert.ok(said.endsWith(` not read: ${c.said}`), said);
    });
});
