// RKE2 runs kube-proxy as a static Pod the kubelet starts from its manifests directory (rancher/rke2
// pkg/podexecutor/staticpod.go KubeProxy, pkg/staticpod/staticpod.go): in the API a mirror Pod
// kube-proxy-NODE labelled component=kube-proxy, tier=control-plane, owned by its Node, its image
// rancher/hardened-kubernetes, its flags on its command (issue 38). The k3s scenario's cluster
// (test/fixtures/distributions/k3s) turned RKE2: the k3s Nodes' kubelet version "+rke2r1", and
// each node's mirror Pod as RKE2 writes it; the rules are the same real kube-proxy v1.33's.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { redactFacts } from '../../src/core/redact/redact.js';
import { kdebug, ROOT } from '../support/cli.js';
import { allModes } from '../support/modes.js';

interface Finding {
  id: string;
  status: string;
  title: string;
  evidence: { kind: string; text: string }[];
}
interface Report {
  status: string;
  steps: { id: string; findings: Finding[] }[];
}
interface Obj {
  kind: string;
  metadata: Record<string, unknown>;
  status?: Record<string, unknown> & { nodeInfo?: Record<string, string> };
  [key: string]: unknown;
}

const IMAGE = 'index.docker.io/rancher/hardened-kubernetes:v1.33.5-rke2r1-build20251015';
const work = mkdtempSync(join(tmpdir(), 'kdebug-rke2-'));
const dir = join(work, 'rke2');
after(() => rmSync(work, { recursive: true, force: true }));

/** The mirror Pod of RKE2's kube-proxy static Pod on `node`. */
const mirrorPod = (node: string, ip: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `kube-proxy-${node}`,
    namespace: 'kube-system',
    labels: { component: 'kube-proxy', tier: 'control-plane' },
    annotations: {
      'kubernetes.io/config.hash': '0123456789abcdef0123456789abcdef',
      'kubernetes.io/config.mirror': '0123456789abcdef0123456789abcdef',
      'kubernetes.io/config.source': 'file',
    },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, controller: true }],
  },
  spec: {
    nodeName: node,
    hostNetwork: true,
    priorityClassName: 'system-cluster-critical',
    containers: [
      {
        name: 'kube-proxy',
        image: IMAGE,
        command: [
          'kube-proxy',
          '--cluster-cidr=10.244.0.0/16',
          '--conntrack-max-per-core=0',
          '--healthz-bind-address=127.0.0.1',
          `--hostname-override=${node}`,
          '--kubeconfig=/var/lib/rancher/rke2/agent/kubeproxy.kubeconfig',
          '--proxy-mode=iptables',
        ],
      },
    ],
  },
  status: {
    phase: 'Running',
    hostIP: ip,
    podIP: ip,
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
    })),
    containerStatuses: [
      { name: 'kube-proxy', ready: true, restartCount: 0, state: { running: {} } },
    ],
  },
});

before(() => {
  cpSync(join(ROOT, 'test/fixtures/distributions/k3s'), dir, { recursive: true });
  const file = join(dir, 'objects.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: Obj[] };
  for (const o of list.items)
    if (o.kind === 'Node') o.status!.nodeInfo!['kubeletVersion'] = 'v1.33.5+rke2r1';
  list.items.push(mirrorPod('node-a', '192.0.2.21'), mirrorPod('node-b', '192.0.2.22'));
  writeFileSync(file, JSON.stringify(list));
  // what an RKE2 node answers was not recorded: the version must come from the Pod
  for (const n of ['node-a', 'node-b']) rmSync(join(dir, 'nodes', n, 'proxy-metrics.txt'));
});

describe('RKE2: kube-proxy as a static Pod', () => {
  it('svc finds the static Pods running, the version from their image, never "not running"', () => {
    const r = kdebug(['svc', '--snapshot', dir, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    const all = report.steps.flatMap((s) => s.findings);
    const ids = all.map((f) => `${f.status} ${f.id}`);
    assert.ok(ids.includes('pass kube-proxy-running'), ids.join(', '));
    assert.ok(
      !ids.some((i) => / kube-proxy-(not-running|embedded|outside-pod)$/.test(i)),
      ids.join(', '),
    );
    const version = all.find((f) => f.id === 'kube-proxy-version')!;
    assert.deepEqual(
      version.evidence.map((e) => e.text),
      ['node-a', 'node-b'].map(
        (n) => `kube-proxy v1.33.5 on ${n}, from the image ${IMAGE} of Pod kube-proxy-${n}`,
      ),
    );
    // its flags are its configuration: the masquerade condition is checked, no note says unread
    assert.ok(!all.some((f) => f.id === 'masquerade-differs'), ids.join(', '));
    assert.equal(all.find((f) => f.id === 'rules-match')?.status, 'pass');
  });

  it("redacted as snapshot save redacts, the static Pods' image and flags are kept", async () => {
    const facts = await readSnapshot(dir);
    const read = (f: typeof facts) => {
      const analysis = new Analysis(f, { code: allModes });
      return ['node-a', 'node-b'].map((n) => {
        const s = analysis.state(n);
        return [s.version?.value.text, s.version?.source, s.config.value.clusterCIDR];
      });
    };
    assert.deepEqual(read(facts), [
      ['v1.33.5', `the image ${IMAGE} of Pod kube-proxy-node-a`, '10.244.0.0/16'],
      ['v1.33.5', `the image ${IMAGE} of Pod kube-proxy-node-b`, '10.244.0.0/16'],
    ]);
    assert.deepEqual(read(redactFacts(facts).facts), read(facts));
  });
});
