import assert from 'node:assert/strict';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import { describe, it } from 'node:test';
import { kubeProxyCheck } from '../../../src/core/checks/kube-proxy/kube-proxy.js';
import { kubeProxySelector } from '../../../src/core/checks/kube-proxy/pods.js';
import { parseProxyMetrics } from '../../../src/core/checks/kube-proxy/sync.js';
import { CheckContext } from '../../../src/core/checks/context.js';
import type { KubeObject } from '../../../src/core/model.js';
import {
  aPod,
  aService,
  anEndpointSlice,
  dumpFor,
  facts,
  ids,
  kubeProxy,
  run,
  TARGET,
  twoNodes,
  webPods,
} from './builders.js';
import { allModes } from '../../support/modes.js';

/** A next command as the person's terminal shows it. */
const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

const base = () => [aService(), anEndpointSlice(), ...webPods(), ...twoNodes()];
const cilium = () =>
  ['node-a', 'node-b'].map((n, i) =>
    aPod({
      name: `cilium-${i}abc`,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'cilium' },
      node: n,
      owner: { kind: 'DaemonSet', name: 'cilium' },
      ports: [],
    }),
  );
const metrics = (last: number, queued: number, failures = 0) =>
  `# HELP kubeproxy_sync_proxy_rules_last_timestamp_seconds ...\nkubeproxy_sync_proxy_rules_last_timestamp_seconds ${last}\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds ${queued}\nkubeproxy_sync_proxy_rules_iptables_restore_failures_total ${failures}\n`;
/** The kube-proxy ConfigMap kubeadm writes, naming a mode. */
const proxyConfigMap = (mode: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'kube-proxy', namespace: 'kube-system' },
  data: { 'config.conf': `kind: KubeProxyConfiguration\nmode: "${mode}"\n` },
});
const CAPTURED = Date.parse('2024-05-01T12:00:00Z') / 1000;

describe('kube-proxy step', () => {
  const cases: {
    name: string;
    objects: KubeObject[];
    nodes?: Record<string, Record<string, string>>;
    want: string[];
  }[] = [
    {
      name: 'running on every node, mode only assumed (the defaults): not observed',
      objects: [...base(), ...kubeProxy()],
      want: [
        'kube-proxy-running:pass',
        'proxy-mode-not-observed:skip',
        'kube-proxy-version-not-observed:skip',
      ],
    },
    {
      name: 'crash-looping on one node',
      objects: [...base(), ...kubeProxy(['node-a', 'node-b'], { notReadyOn: 'node-b' })],
      want: [
        'kube-proxy-not-running:fail',
        'proxy-mode-not-observed:skip',
        'kube-proxy-version-not-observed:skip',
      ],
    },
    {
      name: 'missing on one node',
      objects: [...base(), ...kubeProxy(['node-a'])],
      want: [
        'kube-proxy-not-running:fail',
        'proxy-mode-not-observed:skip',
        'kube-proxy-version-not-observed:skip',
      ],
    },
    {
      // before: "✗ no kube-proxy Pod on node node-b: nothing updates the Service rules", its
      // /proxyMode answering beside it
      name: 'no Pod on one node, whose /proxyMode answered: kube-proxy outside a Pod, not down',
      objects: [...base(), ...kubeProxy(['node-a'])],
      nodes: { 'node-a': { 'proxy-mode': 'iptables' }, 'node-b': { 'proxy-mode': 'iptables' } },
      want: [
        'kube-proxy-running:pass',
        'kube-proxy-outside-pod:warn',
        'proxy-mode:pass',
        'kube-proxy-version-not-observed:skip',
      ],
    },
    {
      name: 'nodes in different modes',
      objects: [...base(), ...kubeProxy()],
      nodes: { 'node-a': { 'proxy-mode': 'iptables' }, 'node-b': { 'proxy-mode': 'ipvs' } },
      want: [
        'kube-proxy-running:pass',
        'proxy-mode-differs:warn',
        'kube-proxy-version-not-observed:skip',
      ],
    },
    {
      name: 'replaced by Cilium, as its agents say on their nodes',
      objects: [...base(), ...cilium()],
      nodes: {
        'node-a': { 'cilium-status': 'KubeProxyReplacement:    True   [eth0]\n' },
        'node-b': { 'cilium-status': 'KubeProxyReplacement:    True   [eth0]\n' },
      },
      want: ['kube-proxy-replaced:pass'],
    },
    {
      // cilium Pods read from the API, no agent's status read: not observed, not a pass
      name: 'Cilium Pods and no kube-proxy, no agent status read',
      objects: [...base(), ...cilium()],
      want: ['kube-proxy-replaced:skip'],
    },
    {
      name: 'synced recently',
      objects: [...base(), ...kubeProxy()],
      nodes: { 'node-a': { 'proxy-metrics': metrics(CAPTURED - 5, CAPTURED - 6) } },
      want: [
        'kube-proxy-running:pass',
        'proxy-mode-not-observed:skip',
        'kube-proxy-version-not-observed:skip',
        'kube-proxy-synced:pass',
      ],
    },
    {
      name: 'a change queued for minutes, never written',
      objects: [...base(), ...kubeProxy()],
      nodes: { 'node-a': { 'proxy-metrics': metrics(CAPTURED - 900, CAPTURED - 600) } },
      want: [
        'kube-proxy-running:pass',
        'proxy-mode-not-observed:skip',
        'kube-proxy-version-not-observed:skip',
        'kube-proxy-sync-stale:warn',
      ],
    },
    {
      name: 'iptables-restore failing',
      objects: [...base(), ...kubeProxy()],
      nodes: { 'node-a': { 'proxy-metrics': metrics(CAPTURED - 5, CAPTURED - 6, 3) } },
      want: [
        'kube-proxy-running:pass',
        'proxy-mode-not-observed:skip',
        'kube-proxy-version-not-observed:skip',
        'kube-proxy-sync-stale:warn',
      ],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const f = facts(c.objects, c.nodes);
      f.meta.capturedAt = '2024-05-01T12:00:00Z';
      assert.deepEqual(ids(run(kubeProxyCheck, f)), c.want);
    });

  it('counts a mode only where the node showed it: a node not read is not observed, even with a ConfigMap', () => {
    const objects = [...base(), ...kubeProxy(['node-a', 'node-b']), proxyConfigMap('iptables')];
    const found = run(kubeProxyCheck, facts(objects, { 'node-a': { 'proxy-mode': 'iptables' } }));
    const mode = found.find((f) => f.id === 'proxy-mode')!;
    assert.equal(mode.status, 'pass');
    assert.equal(mode.title, 'iptables mode on 1 node');
    assert.ok(mode.evidence.every((e) => e.kind === 'observed'));
    const unread = found.find((f) => f.id === 'proxy-mode-not-observed')!;
    assert.equal(unread.status, 'skip');
    assert.equal(
      unread.title,
      'proxy mode not observed on 1 node: node-b not read (configured: iptables)',
    );
  });

  it('passes no mode the rules or kube-proxy did not show: the ConfigMap alone is a skip', () => {
    const objects = [...base(), ...kubeProxy(['node-a', 'node-b']), proxyConfigMap('ipvs')];
    assert.deepEqual(ids(run(kubeProxyCheck, facts(objects))), [
      'kube-proxy-running:pass',
      'proxy-mode-not-observed:skip',
      'kube-proxy-version-not-observed:skip',
    ]);
  });

  it("a node's rules or /configz that disagree with the ConfigMap say what runs, and warn", () => {
    const objects = [...base(), ...kubeProxy(['node-a', 'node-b']), proxyConfigMap('ipvs')];
    const configz = (mode: string) =>
      JSON.stringify({ 'kubeproxy.config.k8s.io': { mode, clusterCIDR: '10.244.0.0/16' } });
    const found = run(
      kubeProxyCheck,
      facts(objects, {
        'node-a': { 'iptables-save': dumpFor(objects, 'node-a') },
        'node-b': { 'proxy-configz': configz('iptables') },
      }),
    );
    const differs = found.find((f) => f.id === 'proxy-mode-differs')!;
    assert.equal(differs.status, 'warn');
    assert.equal(differs.title, 'node-a and node-b run iptables, the ConfigMap says ipvs');
    assert.ok(!found.some((f) => f.id === 'proxy-mode-not-observed'));
  });

  it('names the node and the command for a kube-proxy that is not running', () => {
    const [f] = run(
      kubeProxyCheck,
      facts([...base(), ...kubeProxy(['node-a', 'node-b'], { notReadyOn: 'node-b' })]),
    );
    assert.equal(f!.title, 'kube-proxy on node-b is not running: CrashLoopBackOff');
    assert.equal(f!.node, 'node-b');
    assert.equal(line(f!.next), 'kubectl -n kube-system logs kube-proxy-1x9z --previous');
  });

  it("gives the command that shows the agent's status where no node showed it", () => {
    const [f] = run(kubeProxyCheck, facts([...base(), ...cilium()]));
    // the first node's agent Pod and container, named: `exec ds/cilium` lands on any agent
    assert.equal(
      line(f!.next),
      'kubectl -n kube-system exec cilium-0abc -c app -- cilium-dbg status --verbose',
    );
    assert.equal(f!.status, 'skip');
    assert.ok(f!.evidence.some((e) => e.kind === 'not-observed'));
  });

  it('reads the sync timestamps and failure counters from /metrics', () => {
    assert.deepEqual(parseProxyMetrics(metrics(100, 90, 2)), {
      lastSync: 100,
      lastQueued: 90,
      failures: 2,
    });
    assert.deepEqual(parseProxyMetrics(''), {
      lastSync: undefined,
      lastQueued: undefined,
      failures: 0,
    });
  });

  it('is skipped for a headless Service', () => {
    assert.deepEqual(
      ids(
        run(
          kubeProxyCheck,
          facts([aService({ spec: { clusterIP: 'None', clusterIPs: ['None'] } })]),
        ),
      ),
      ['kube-proxy-not-involved:skip'],
    );
  });

  it('warns of an agent whose own status says it fails or no longer follows the API, with the line as observed (r145 f39)', () => {
    const kpr = 'KubeProxyReplacement:    True   [eth0]\n';
    const failing = `${kpr}Kubernetes:              Disabled         1.29 (v1.29.10) [linux/amd64]\nCilium health daemon:    Ok\nCilium:                  Failure   1.18.6 (v1.18.6-3bb33f3c)\n`;
    const found = run(
      kubeProxyCheck,
      facts([...base(), ...cilium()], {
        'node-a': { 'cilium-status': failing },
        'node-b': {
          'cilium-status': `${kpr}Kubernetes:   Ok   1.29 (v1.29.10)\nCilium:   Ok   1.18.6\n`,
        },
      }),
    );
    assert.deepEqual(ids(found), ['cilium-agent-failing:warn', 'kube-proxy-replaced:pass']);
    const f = found[0]!;
    assert.equal(f.node, 'node-a');
    assert.match(
      f.title,
      /^node-a: Cilium agent cilium-0abc reports Kubernetes: Disabled, Cilium: Failure$/,
    );
    assert.match(f.explanation, /failing and not following the Kubernetes API/);
    assert.deepEqual(
      f.evidence.map((e) => [e.kind, e.text]),
      [
        ['observed', 'node-a: Kubernetes: Disabled 1.29 (v1.29.10) [linux/amd64]'],
        ['observed', 'node-a: Cilium: Failure 1.18.6 (v1.18.6-3bb33f3c)'],
      ],
    );
    // the node's agent Pod, and its container as the Pod names it (the builder's "app")
    assert.equal(line(f.next), 'kubectl -n kube-system logs cilium-0abc -c app');
  });
});

describe('kube-proxy where it is not a DaemonSet Pod', () => {
  // as k3s creates them: the kubelet's version carries +k3s1, no kube-proxy Pod or DaemonSet,
  // klipper-lb's svclb DaemonSet in kube-system
  const k3sNodes = () =>
    twoNodes().map((n) => ({
      ...n,
      metadata: {
        ...(n['metadata'] as object),
        labels: { 'node.kubernetes.io/instance-type': 'k3s' },
      },
      status: {
        ...(n['status'] as object),
        nodeInfo: { operatingSystem: 'linux', kubeletVersion: 'v1.31.4+k3s1' },
      },
    }));
  const svclb: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { namespace: 'kube-system', name: 'svclb-traefik-f1c2a9b0' },
  };

  it('k3s: kube-proxy inside k3s on each node, never "no kube-proxy Pod"', () => {
    const found = run(
      kubeProxyCheck,
      facts([aService(), anEndpointSlice(), ...webPods(), ...k3sNodes(), svclb]),
    );
    assert.deepEqual(
      found.filter((f) => f.id.startsWith('kube-proxy')).map((f) => `${f.id}:${f.status}`),
      ['kube-proxy-embedded:pass', 'kube-proxy-version:pass'],
    );
    assert.match(found[0]!.title, /inside k3s on 2 nodes/);
    assert.match(found.find((f) => f.id === 'kube-proxy-version')!.title, /v1\.31\.4 on 2 nodes/);
  });

  it('EKS: the kube-proxy DaemonSet of ECR images (no shell in them), its version from the tag', () => {
    const eks = kubeProxy().map((p) => {
      const spec = p['spec'] as { containers: Record<string, unknown>[] };
      const image =
        '602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.31.2-eksbuild.3';
      return { ...p, spec: { ...spec, containers: [{ ...spec.containers[0], image }] } };
    });
    const found = run(
      kubeProxyCheck,
      facts([aService(), anEndpointSlice(), ...webPods(), ...twoNodes(), ...eks]),
    );
    assert.deepEqual(ids(found).slice(0, 1), ['kube-proxy-running:pass']);
    const version = found.find((f) => f.id === 'kube-proxy-version')!;
    assert.match(version.title, /^kube-proxy v1\.31\.2 on 2 nodes$/);
    assert.match(version.evidence[0]!.text, /eksbuild\.3 of Pod/);
  });
});

describe('what a kube-proxy release is compared with', () => {
  const at = (tag: string) =>
    kubeProxy().map((p) => {
      const spec = p['spec'] as { containers: Record<string, unknown>[] };
      const image = `registry.k8s.io/kube-proxy:${tag}`;
      return { ...p, spec: { ...spec, containers: [{ ...spec.containers[0], image }] } };
    });
  const explained = (tag: string, modes?: Record<string, string>) =>
    run(
      kubeProxyCheck,
      facts(
        [...base(), ...at(tag)],
        modes &&
          Object.fromEntries(Object.entries(modes).map(([n, m]) => [n, { 'proxy-mode': m }])),
      ),
    ).find((f) => f.id === 'kube-proxy-version')!.explanation;

  it('a modelled release: with what its own release writes', () => {
    assert.match(explained('v1.33.4'), /compares a node on one of them with what its own release/);
    assert.doesNotMatch(explained('v1.33.4'), /not modelled/);
  });

  it('an unmodelled release: by behaviour, with what the nearest modelled release writes', () => {
    assert.match(
      explained('v1.15.2'),
      /v1\.15\.2 is not modelled: its nodes are compared with what v1\.30 writes, on iptables nodes by behaviour/,
    );
  });

  it('an unmodelled release on nftables and IPVS nodes: said as those drifts compare, no packet walked', () => {
    const said = explained('v1.29.10', { 'node-a': 'nftables', 'node-b': 'ipvs' }) ?? '';
    assert.doesNotMatch(said, /by behaviour/);
    // an nftables node's table says which modelled release wrote it (nftables/drift/written-by.ts)
    assert.match(
      said,
      /except on nftables nodes, compared with the modelled release their table reads as written by/,
    );
    assert.match(said, /on IPVS nodes by what they hold: virtual and real servers/);
  });
});

describe('the kube-proxy Pods a next command lists', () => {
  const proxy = (node: string, labels: Record<string, string>) =>
    aPod({
      name: `kube-proxy-${node}`,
      namespace: 'kube-system',
      node,
      labels,
      owner: { kind: 'DaemonSet', name: 'kube-proxy' },
    });
  const selector = (pods: KubeObject[]) =>
    kubeProxySelector(new CheckContext(facts(pods), TARGET, { code: allModes }));

  it("are kubeadm's k8s-app=kube-proxy where the Pods carry it", () => {
    const pods = ['node-a', 'node-b'].map((n) =>
      proxy(n, { 'k8s-app': 'kube-proxy', 'controller-revision-hash': n }),
    );
    assert.equal(selector(pods), 'k8s-app=kube-proxy');
  });

  it('are the labels all of them share where the DaemonSet labels them otherwise', () => {
    const pods = ['node-a', 'node-b'].map((n) =>
      proxy(n, {
        app: 'kubernetes',
        role: 'proxy',
        'controller-revision-hash': `rev-${n}`,
        'pod-template-generation': '3',
      }),
    );
    assert.equal(selector(pods), 'app=kubernetes,role=proxy');
  });

  it('leave out, by a label of its own, another kube-system Pod that shares their labels', () => {
    const pods = ['node-a', 'node-b'].map((n) => proxy(n, { tier: 'node' }));
    const flannel = aPod({
      name: 'kube-flannel-x',
      namespace: 'kube-system',
      labels: { tier: 'node', app: 'flannel' },
    });
    assert.equal(selector([...pods, flannel]), 'tier=node,!app');
    assert.equal(selector(pods), 'tier=node');
  });
});
