// Each node's kube-proxy decided once: mode, configuration and version, each from the best
// evidence recorded on that node, with a typed provenance; what nothing says is not guessed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../src/core/nodes/analysis.js';
import type { KubeObject } from '../../src/core/model.js';
import { parseVersion } from '../../src/core/version.js';
import { facts, kubeProxy, twoNodes } from './checks/builders.js';
import { allModes } from '../support/modes.js';

const configMap = (mode: string, cidr: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'kube-system', name: 'kube-proxy' },
  data: {
    'config.conf': `apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ${mode}\nclusterCIDR: ${cidr}\n`,
  },
});
const configz = (mode: string, cidr: string) =>
  JSON.stringify({ 'kubeproxy.config.k8s.io': { mode, clusterCIDR: cidr } });
const withImage = (pods: KubeObject[], image: string) =>
  pods.map((p) => {
    const spec = p['spec'] as { containers: Record<string, unknown>[] };
    return { ...p, spec: { ...spec, containers: [{ ...spec.containers[0], image }] } };
  });
const nodeInfo = (info: Record<string, string>) =>
  twoNodes().map((n) => ({
    ...n,
    status: { ...(n['status'] as object), nodeInfo: { operatingSystem: 'linux', ...info } },
  }));

describe('node state: the proxy mode', () => {
  it("takes kube-proxy's own /proxyMode answer first, per node", () => {
    const a = new Analysis(
      facts([...twoNodes(), ...kubeProxy(), configMap('iptables', '10.244.0.0/16')], {
        'node-a': { 'proxy-mode': 'ipvs\n' },
      }),
      { code: allModes },
    );
    assert.equal(a.state('node-a').mode.value, 'ipvs');
    assert.equal(a.state('node-a').mode.from, 'proxyMode');
    assert.equal(a.state('node-a').mode.evidence.kind, 'observed');
    assert.equal(a.state('node-b').mode.value, 'iptables');
    assert.equal(a.state('node-b').mode.from, 'objects');
    // the dataplane the analysis reads follows the same decision
    assert.equal(a.node('node-a').mode(), 'ipvs');
  });

  it('never takes an answer that is not a mode (a 404 page) as one', () => {
    const a = new Analysis(
      facts([...twoNodes(), ...kubeProxy()], {
        'node-a': { 'proxy-mode': '404 page not found\n' },
      }),
      { code: allModes },
    );
    assert.equal(a.state('node-a').mode.value, 'iptables');
    assert.equal(a.state('node-a').mode.from, 'default');
    assert.equal(a.state('node-a').mode.evidence.kind, 'not-observed');
    assert.equal(a.node('node-a').mode(), 'iptables');
  });

  it('is stale, and said so, when the kube-proxy that answered is not running now', () => {
    const a = new Analysis(
      facts([...twoNodes(), ...kubeProxy(['node-a', 'node-b'], { notReadyOn: 'node-b' })], {
        'node-b': { 'proxy-mode': 'nftables' },
      }),
      { code: allModes },
    );
    assert.equal(a.state('node-b').mode.stale, true);
    assert.equal(a.state('node-b').mode.evidence.kind, 'not-observed');
  });
});

describe('node state: the configuration', () => {
  it("is the node's own /configz before the ConfigMap, and the same for mode and the IPVS walk", () => {
    const a = new Analysis(
      facts([...twoNodes(), ...kubeProxy(), configMap('iptables', '10.244.0.0/16')], {
        'node-a': { 'proxy-configz': configz('ipvs', '10.9.0.0/16') },
      }),
      { code: allModes },
    );
    const s = a.state('node-a');
    assert.equal(s.config.from, 'configz');
    assert.equal(s.config.value.clusterCIDR, '10.9.0.0/16');
    assert.equal(s.mode.value, 'ipvs');
    assert.equal(a.state('node-b').config.from, 'objects');
    assert.equal(a.state('node-b').config.value.clusterCIDR, '10.244.0.0/16');
    // cluster-wide, what a kube-proxy serves wins over what the objects say
    assert.equal(a.config(['node-b', 'node-a']).value.clusterCIDR, '10.9.0.0/16');
    assert.equal(a.config(['node-b']).value.clusterCIDR, '10.244.0.0/16');
  });

  it('is the defaults, assumed, with the error, when the ConfigMap does not read', () => {
    const broken: KubeObject = { ...configMap('x', 'y'), data: { 'config.conf': 'mode: [' } };
    const s = new Analysis(facts([...twoNodes(), ...kubeProxy(), broken]), {
      code: allModes,
    }).state('node-a');
    assert.equal(s.config.from, 'default');
    assert.ok(s.config.error);
    assert.equal(s.config.evidence.kind, 'not-observed');
  });
});

describe('node state: the kube-proxy version', () => {
  it('reads the build info on /metrics first', () => {
    const pods = withImage(kubeProxy(), 'registry.k8s.io/kube-proxy:v1.33.1');
    const a = new Analysis(
      facts([...twoNodes(), ...pods], {
        'node-a': {
          'proxy-metrics': 'kubernetes_build_info{git_version="v1.34.2",major="1",minor="34"} 1\n',
        },
      }),
      { code: allModes },
    );
    assert.deepEqual(a.state('node-a').version?.value, {
      text: 'v1.34.2',
      major: 1,
      minor: 34,
      patch: 2,
    });
    assert.equal(a.state('node-a').version?.from, 'metrics');
    assert.match(
      a.state('node-a').version!.evidence.text,
      /kube-proxy v1\.34\.2 on node-a, from its \/metrics/,
    );
    assert.equal(a.state('node-b').version?.from, 'image');
    assert.equal(a.state('node-b').version?.value.minor, 33);
    // the Pod's image names another minor: said beside the answer, not dropped
    assert.match(
      a.state('node-a').version!.disagrees ?? '',
      /^the image registry\.k8s\.io\/kube-proxy:v1\.33\.1 of Pod \S+ says v1\.33\.1$/,
    );
    assert.match(a.state('node-a').version!.evidence.text, /says v1\.33\.1/);
    // a managed build spells the patch apart: the same minor is no disagreement
    const same = new Analysis(
      facts([...twoNodes(), ...withImage(kubeProxy(), 'x/eks/kube-proxy:v1.34.2-eksbuild.3')], {
        'node-a': {
          'proxy-metrics': 'kubernetes_build_info{git_version="v1.34.2-eks-4c1f3a2"} 1\n',
        },
      }),
      { code: allModes },
    );
    assert.equal(same.state('node-a').version?.from, 'metrics');
    assert.equal(same.state('node-a').version?.disagrees, undefined);
  });

  it("understands managed images' tags and digests", () => {
    for (const [image, text] of [
      ['602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.31.2-eksbuild.3', 'v1.31.2'],
      ['gke.gcr.io/kube-proxy-amd64:v1.32.4-gke.1200', 'v1.32.4'],
      ['registry.k8s.io/kube-proxy:v1.30.4@sha256:ab12', 'v1.30.4'],
      ['mcr.microsoft.com/oss/kubernetes/kube-proxy:v1.30.7-hotfix.20241120', 'v1.30.7'],
    ])
      assert.equal(
        new Analysis(facts([...twoNodes(), ...withImage(kubeProxy(), image!)]), {
          code: allModes,
        }).state('node-a').version?.value.text,
        text,
        image,
      );
  });

  it("falls back to the Node's nodeInfo, then, on k3s and RKE2 without a kube-proxy Pod, the kubelet", () => {
    const old = new Analysis(
      facts([...nodeInfo({ kubeProxyVersion: 'v1.30.1' }), ...kubeProxy()]),
      { code: allModes },
    );
    assert.equal(old.state('node-a').version?.from, 'nodeInfo');
    const k3s = new Analysis(facts(nodeInfo({ kubeletVersion: 'v1.31.4+k3s1' })), {
      code: allModes,
    });
    assert.equal(k3s.state('node-a').version?.from, 'embedded');
    assert.equal(k3s.state('node-a').version?.value.text, 'v1.31.4');
    assert.match(k3s.state('node-a').version!.source, /k3s runs kube-proxy inside its own process/);
    // a plain kubelet's version says nothing of a kube-proxy that runs apart
    const plain = new Analysis(facts(nodeInfo({ kubeletVersion: 'v1.31.4' })), { code: allModes });
    assert.equal(plain.state('node-a').version, undefined);
  });

  it('is unknown, never guessed, when nothing names it', () => {
    assert.equal(
      new Analysis(facts([...twoNodes(), ...kubeProxy()]), { code: allModes }).state('node-a')
        .version,
      undefined,
    );
    for (const s of ['latest', 'v1', '', 'sha256:ab', 'v1.30.x'])
      assert.equal(parseVersion(s), undefined, s);
  });
});
