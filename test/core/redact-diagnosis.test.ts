// A redacted snapshot diagnoses as the original where the diagnosis leans on what redaction once
// dropped: kube-proxy's feature gates (its flag, its file) and a Cilium agent's image tag (its
// release when its status was not read). Bundled snapshots, changed in memory, redacted as
// `kdebug snapshot save` redacts them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { CILIUM_STEMS } from '../../src/core/dataplane/cilium/agent/agent.js';
import { diagnose } from '../../src/core/diagnose.js';
import {
  clusterView,
  flattenObjects,
  isKubeProxyPod,
  kubeProxyConfigOf,
  toPod,
} from '../../src/core/kube/objects.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { redactFacts } from '../../src/core/redact/redact.js';
import { allModes } from '../support/modes.js';

/** Off, kube-proxy 1.18 to 1.21 proxies from the Endpoints, not the EndpointSlices. */
const GATES = { EndpointSliceProxying: false, KubeProxyNFTablesLocalhostNodePorts: true };
const FLAG = `--feature-gates=${Object.entries(GATES)
  .map(([k, v]) => `${k}=${v}`)
  .join(',')}`;
const FILE = `featureGates:\n${Object.entries(GATES)
  .map(([k, v]) => `  ${k}: ${v}\n`)
  .join('')}`;

type Change = (o: KubeObject) => KubeObject;

/** The gates on kube-proxy's command line. */
const flagged: Change = (o) => {
  if (o.kind !== 'Pod' || !isKubeProxyPod(toPod(o))) return o;
  const spec = o['spec'] as { containers: { command: string[] }[] };
  const [first, ...rest] = spec.containers;
  const containers = [{ ...first!, command: [...first!.command, FLAG] }, ...rest];
  return { ...o, spec: { ...spec, containers } };
};

/** The gates in kube-proxy's configuration file. */
const filed: Change = (o) => {
  if (o.kind !== 'ConfigMap' || o.metadata?.name !== 'kube-proxy') return o;
  const data = o['data'] as Record<string, string>;
  return { ...o, data: { ...data, 'config.conf': `${data['config.conf']}${FILE}` } };
};

const changed = (f: Facts, change: Change): Facts => ({
  ...f,
  objects: flattenObjects(f.objects).map(change),
});

/** The agents' status not read: their release is their image's tag. */
const statusUnread = (f: Facts): Facts => ({
  ...f,
  nodes: Object.fromEntries(
    Object.entries(f.nodes).map(([n, { [CILIUM_STEMS.status]: _, ...rest }]) => [n, rest]),
  ),
});

/** What each node's kube-proxy and Cilium agent are read as, and the diagnosis of each Service. */
function read(f: Facts) {
  const view = clusterView(f.objects);
  const analysis = new Analysis(f, { code: allModes });
  return {
    nodes: view.nodes.map((n) => {
      const s = analysis.state(n.name);
      return [n.name, s.config.value, s.version?.value.text, s.cilium?.version];
    }),
    steps: view.services.map(
      (s) => diagnose(f, { namespace: s.namespace, service: s.name }, { code: allModes }).steps,
    ),
  };
}

function assertSame(f: Facts) {
  const { facts: redacted } = redactFacts(f);
  assert.deepEqual(read(redacted), read(f));
  return redacted;
}

describe('a bundled snapshot diagnoses the same once redacted', () => {
  for (const dir of ['dual-stack-ipv6-rules-missing', 'stale-endpoint'])
    for (const [how, change] of [
      ['on its command line', flagged],
      ['in its file', filed],
    ] as const)
      it(`${dir}, with kube-proxy's feature gates ${how}`, async () => {
        const redacted = assertSame(changed(await readSnapshot(`snapshots/${dir}`), change));
        assert.deepEqual(kubeProxyConfigOf(clusterView(redacted.objects)).featureGates, GATES);
      });

  it("cilium-stale-backend, its agents' status not read", async () => {
    const redacted = assertSame(statusUnread(await readSnapshot('snapshots/cilium-stale-backend')));
    const agent = new Analysis(redacted, { code: allModes }).state('vm-12-11-centos').cilium;
    assert.equal(agent?.version, 'v1.18.6');
  });
});
