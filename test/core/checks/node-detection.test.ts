// What the steps make of how the nodes were read: the iptables backend per node (both is a
// finding), the proxy mode from /proxyMode, the ConfigMap or the rules, and a node whose rules a
// live run could not read. IP conventions: builders.ts (nodes 192.0.2.10/11, Services 10.96/16).
import { evidenceText } from '../../../src/core/findings/evidence.js';
import {
  NODE_DEBUG_IMAGE,
  resolveNext,
  shellLine,
} from '../../../src/core/findings/next-command.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeProxyCheck } from '../../../src/core/checks/kube-proxy/kube-proxy.js';
import { proxyModes } from '../../../src/core/checks/kube-proxy/modes.js';
import { CheckContext } from '../../../src/core/checks/context.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import type { KubeObject } from '../../../src/core/model.js';
import { nodeAccessLine, type NodeAccess } from '../../../src/core/nodes/access.js';
import { dumpFor, dumps, facts, healthy, ids, run, TARGET } from './builders.js';
import { allModes } from '../../support/modes.js';

const nat = (dump: string) => dump.slice(dump.indexOf('*nat'));
const EMPTY_NAT = '*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n';
const proxyConfigMap = (mode: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'kube-proxy', namespace: 'kube-system' },
  data: { 'config.conf': `kind: KubeProxyConfiguration\nmode: "${mode}"\n` },
});

describe('iptables backend findings', () => {
  const objects = healthy();
  const a = dumpFor(objects, 'node-a');
  const b = dumpFor(objects, 'node-b');
  const cases: [string, Record<string, Record<string, string>>, string[]][] = [
    ['no backend read: nothing said', dumps(objects), []],
    [
      'each node in one backend',
      {
        'node-a': {
          'iptables-save': a,
          'iptables-nft-save-nat': nat(a),
          'iptables-legacy-save-nat': EMPTY_NAT,
        },
        'node-b': {
          'iptables-save': b,
          'iptables-legacy-save-nat': nat(b),
          'iptables-nft-save-nat': EMPTY_NAT,
        },
      },
      ['iptables-backend:pass'],
    ],
    [
      'node-b in both backends',
      {
        'node-a': {
          'iptables-save': a,
          'iptables-nft-save-nat': nat(a),
          'iptables-legacy-save-nat': EMPTY_NAT,
        },
        'node-b': {
          'iptables-save': b,
          'iptables-legacy-save-nat': nat(b),
          'iptables-nft-save-nat': nat(b),
        },
      },
      ['iptables-backends-both:warn'],
    ],
  ];
  for (const [name, nodes, want] of cases)
    it(name, () => {
      const found = run(kubeProxyCheck, facts(objects, nodes)).filter((f) =>
        f.id.startsWith('iptables-backend'),
      );
      assert.deepEqual(ids(found), want);
    });

  it('names the node, both backends and where to compare them', () => {
    const [f] = run(
      kubeProxyCheck,
      facts(objects, {
        'node-b': {
          'iptables-save': b,
          'iptables-legacy-save-nat': nat(b),
          'iptables-nft-save-nat': nat(b),
        },
      }),
    ).filter((x) => x.id === 'iptables-backends-both');
    assert.equal(f!.title, 'node-b: kube-proxy chains in both iptables backends, legacy and nft');
    assert.equal(f!.node, 'node-b');
    assert.deepEqual(f!.evidence.map(evidenceText), [
      "node-b: kube-proxy's chains in legacy and nft (iptables-legacy-save-nat, iptables-nft-save-nat)",
    ]);
    assert.equal(
      shellLine(resolveNext(f!.next!)),
      `kubectl debug node/node-b -it --image=${NODE_DEBUG_IMAGE} --profile=sysadmin -- chroot /host sh -c 'iptables-legacy-save -t nat | grep -c '\\''^-A KUBE-SEP'\\'''`,
    );
    assert.match(f!.advice!, /iptables-nft-save -t nat likewise/);
  });

  it('reads the IPv6 backends apart: kube-proxy chains in both ip6tables backends is a finding of its own', () => {
    // the same chain names in ip6tables (the content does not matter to the backend check)
    const found = run(
      kubeProxyCheck,
      facts(objects, {
        'node-b': {
          'iptables-save': b,
          'iptables-nft-save-nat': nat(b),
          'iptables-legacy-save-nat': EMPTY_NAT,
          'ip6tables-legacy-save-nat': nat(b),
          'ip6tables-nft-save-nat': nat(b),
        },
      }),
    ).filter((x) => x.id.startsWith('iptables-backend'));
    assert.deepEqual(
      found.map((f) => `${f.id} ${f.title}`),
      [
        'iptables-backends-both IPv6: node-b: kube-proxy chains in both ip6tables backends, legacy and nft',
      ],
    );
    assert.deepEqual(found[0]!.evidence.map(evidenceText), [
      "node-b: kube-proxy's chains in nft only (iptables-legacy-save-nat, iptables-nft-save-nat)",
      "IPv6: node-b: kube-proxy's chains in legacy and nft (ip6tables-legacy-save-nat, ip6tables-nft-save-nat)",
    ]);
    assert.deepEqual(found[0]!.next, {
      argv: ['ip6tables-legacy-save', '-t', 'nat'],
      pipe: [['grep', '-c', '^-A KUBE-SEP']],
      hostBinaries: true,
      node: 'node-b',
    });
  });
});

describe('proxy mode per node', () => {
  const objects = healthy();
  const a = dumpFor(objects, 'node-a');
  const ipvs =
    '*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\nCOMMIT\n';
  const modes = (objs: KubeObject[], nodes: Record<string, Record<string, string>>) =>
    proxyModes(new CheckContext(facts(objs, nodes), TARGET, { code: allModes })).map(
      (m) => `${m.node} ${m.mode} (${m.source})`,
    );
  const cases: [string, KubeObject[], Record<string, Record<string, string>>, string[]][] = [
    [
      '/proxyMode first',
      [...objects, proxyConfigMap('ipvs')],
      { 'node-a': { 'proxy-mode': 'iptables' } },
      [
        'node-a iptables (/proxyMode on node-a)',
        'node-b ipvs (ConfigMap kube-system/kube-proxy key config.conf)',
      ],
    ],
    [
      'no ConfigMap, no /proxyMode: what the rules show',
      objects,
      { 'node-a': { 'iptables-save': a }, 'node-b': { 'iptables-save': ipvs } },
      [
        'node-a iptables (the rules in nodes/node-a/iptables-save.txt)',
        'node-b ipvs (the rules in nodes/node-b/iptables-save.txt)',
      ],
    ],
    [
      // one default, decided where the configuration is read: no second one in the node state
      "a ConfigMap naming no mode: kube-proxy's default, configured",
      [...objects, proxyConfigMap('')],
      {},
      [
        'node-a iptables (ConfigMap kube-system/kube-proxy key config.conf)',
        'node-b iptables (ConfigMap kube-system/kube-proxy key config.conf)',
      ],
    ],
    [
      "nothing at all: kube-proxy's default",
      objects,
      {},
      [
        'node-a iptables (defaults (no kube-proxy ConfigMap))',
        'node-b iptables (defaults (no kube-proxy ConfigMap))',
      ],
    ],
  ];
  for (const [name, objs, nodes, want] of cases)
    it(name, () => assert.deepEqual(modes(objs, nodes), want));

  it('flags nodes whose rules show another mode than the others', () => {
    const found = run(
      kubeProxyCheck,
      facts(objects, { 'node-a': { 'iptables-save': a }, 'node-b': { 'iptables-save': ipvs } }),
    ).find((f) => f.id === 'proxy-mode-differs');
    assert.equal(found?.title, 'the nodes run different proxy modes: iptables and ipvs');
  });
});

describe('a node whose rules were not read', () => {
  const objects = healthy();
  const nodeErrors = [
    {
      node: 'node-b',
      command: 'iptables-save',
      exitCode: null,
      error:
        'cannot run iptables-save on node node-b: kube-proxy Pod: exec kube-system/kube-proxy-1x9z: error dialing backend',
    },
  ];
  it('is marked while the others are checked', () => {
    const f = facts(objects, { 'node-a': { 'iptables-save': dumpFor(objects, 'node-a') } });
    f.meta['nodeErrors'] = nodeErrors;
    const found = run(rulesCheck, f);
    assert.deepEqual(ids(found), ['rules-match:pass', 'rules-not-read:warn']);
    assert.equal(found[1]!.title, 'node-b: rules not read');
    assert.match(found[1]!.explanation, /error dialing backend\.$/);
  });

  it('is marked when no node could be read', () => {
    const f = facts(objects);
    f.meta['nodeErrors'] = nodeErrors;
    assert.deepEqual(ids(run(rulesCheck, f)), ['rules-not-read:warn']);
  });

  it('is not a finding in a snapshot that never tried (no nodeErrors)', () => {
    assert.deepEqual(ids(run(rulesCheck, facts(objects))), ['rules-not-recorded:skip']);
  });
});

describe('how each node was reached, in one line', () => {
  const cases: [string, NodeAccess, string][] = [
    [
      'kube-proxy for rules, a debug Pod for the rest',
      {
        node: 'node-a',
        used: [
          {
            transport: 'kube-proxy',
            via: 'exec kube-system/kube-proxy-x7k2p',
            commands: ['iptables-save', 'iptables-nft-save-nat'],
          },
          {
            transport: 'pod',
            via: 'debug Pod default/kdebug-node-a-x2x7q',
            commands: ['proxy-mode', 'ip-addr', 'icmp-echo_10.96.0.20'],
          },
        ],
        skipped: [
          {
            transport: 'kube-proxy',
            reason: 'its image has no tools for them',
            commands: ['proxy-mode', 'ip-addr', 'icmp-echo_10.96.0.20'],
            cannotRun: true,
          },
        ],
      },
      'node-a: rules via exec kube-system/kube-proxy-x7k2p; addresses, kube-proxy status and probes via debug Pod default/kdebug-node-a-x2x7q (kube-proxy Pod skipped for addresses, kube-proxy status and probes: its image has no tools for them)',
    ],
    [
      'not reached: what each way said, the unsupported ones left out',
      {
        node: 'node-c',
        used: [],
        skipped: [
          {
            transport: 'ssh',
            reason: 'ssh root@192.0.2.13: connection refused',
            commands: ['iptables-save'],
          },
          {
            transport: 'kube-proxy',
            reason: 'no kube-proxy Pod on node node-c',
            commands: ['iptables-save'],
          },
          {
            transport: 'kube-proxy',
            reason: 'its image has no tools for them',
            commands: ['ip-addr'],
            cannotRun: true,
          },
        ],
      },
      'node-c: not reached (kube-proxy Pod: no kube-proxy Pod on node node-c; SSH: ssh root@192.0.2.13: connection refused)',
    ],
  ];
  for (const [name, access, want] of cases)
    it(name, () => assert.equal(nodeAccessLine(access), want));
});

describe('a kube-proxy Pod not scheduled yet', () => {
  it('is said so, never "on undefined"', () => {
    // node-b's kube-proxy Pod is Pending with no node: node-b has none running
    const objects = healthy().map((o) => {
      if (o.kind !== 'Pod' || !(o.metadata?.name ?? '').startsWith('kube-proxy-')) return o;
      if ((o['spec'] as { nodeName?: string }).nodeName !== 'node-b') return o;
      const { nodeName: _gone, ...spec } = o['spec'] as Record<string, unknown>;
      return { ...o, spec, status: { phase: 'Pending' } } as KubeObject;
    });
    const text = run(kubeProxyCheck, facts(objects))
      .flatMap((f) => [f.title, ...f.evidence.map(evidenceText)])
      .join('\n');
    assert.doesNotMatch(text, /undefined/);
    assert.match(text, /\(not scheduled yet\)/);
  });
});
