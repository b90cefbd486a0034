// Snapshots safe to attach to a ticket: of each object only what the diagnosis reads, the names in
// meta.json hashed with a salt of their own, and meta.json saying what was kept and taken.
// Addresses: Service CIDR 10.96.0.0/16, Pod CIDR 10.244.0.0/16, API server 203.0.113.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { clusterView, kubeProxyConfigOf } from '../../src/core/kube/objects.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { readErrorsOf } from '../../src/core/facts/not-read.js';
import { redactFacts, saltedHash } from '../../src/core/redact/redact.js';
import { allModes } from '../support/modes.js';

const SERVER = 'https://203.0.113.10:6443';
const CONTEXT = 'arn:aws:eks:eu-west-1:123456789012:cluster/prod';

const kubeProxyPod = (command: string[]): KubeObject => ({
  kind: 'Pod',
  metadata: {
    name: 'kube-proxy-abcde',
    namespace: 'kube-system',
    labels: { 'k8s-app': 'kube-proxy' },
  },
  spec: {
    containers: [{ name: 'kube-proxy', image: 'registry.k8s.io/kube-proxy:v1.33.1', command }],
    volumes: [{ name: 'cfg', configMap: { name: 'proxy-settings' } }],
  },
});
const configMap = (name: string, data: Record<string, string>, namespace = 'kube-system') => ({
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});
const redactedObjects = (...objects: KubeObject[]) =>
  redactFacts({ objects, nodes: {}, meta: {} }).facts.objects;
const dataOf = (o: KubeObject | undefined) => o?.['data'];

describe('redacting the names in meta.json', () => {
  const facts: Facts = {
    objects: [],
    nodes: {},
    meta: {
      context: CONTEXT,
      server: SERVER,
      user: 'alice',
      namespace: 'default',
      readErrors: [
        {
          what: 'Nodes',
          error: `cannot reach the API server at ${SERVER} (context "${CONTEXT}"): connection reset by the server (ECONNRESET)`,
          reason: 'unreachable',
        },
        { what: 'Pods', error: `access denied by RBAC: user "alice" cannot list pods` },
      ],
      nodeErrors: [
        { node: 'node-a', command: 'ip-addr', exitCode: null, error: 'dial 203.0.113.10:6443' },
      ],
    },
  };
  const { facts: out, redaction } = redactFacts(facts, { salt: 'pepper' });

  it('hashes the context, the user and the server with the salt', () => {
    assert.deepEqual(
      [out.meta.context, out.meta['user'], out.meta.server],
      [saltedHash('pepper', CONTEXT), saltedHash('pepper', 'alice'), saltedHash('pepper', SERVER)],
    );
    assert.match(String(out.meta.server), /^sha256:[0-9a-f]{16}$/);
    assert.notEqual(saltedHash('pepper', 'alice'), saltedHash('salt', 'alice'));
  });

  it('salts each snapshot anew, and stores the salt nowhere', () => {
    const [a, b] = [redactFacts(facts), redactFacts(facts)];
    assert.notEqual(a.facts.meta.server, b.facts.meta.server);
    assert.ok(!JSON.stringify(out).includes('pepper'));
  });

  it('replaces every mention in the messages with the same hash', () => {
    const [nodes, pods] = readErrorsOf(out);
    assert.equal(
      nodes!.error,
      `cannot reach the API server at ${out.meta.server} (context "${out.meta.context}"): connection reset by the server (ECONNRESET)`,
    );
    assert.equal(pods!.error, `access denied by RBAC: user "${out.meta['user']}" cannot list pods`);
    // the host and port of the server, as a dial error prints them
    assert.deepEqual(out.meta['nodeErrors'], [
      { node: 'node-a', command: 'ip-addr', exitCode: null, error: `dial ${out.meta.server}` },
    ]);
    assert.deepEqual(
      redaction.removed.filter(
        (r) => r.what.startsWith('meta.json') || r.what.includes('messages'),
      ),
      [
        { what: 'meta.json context (replaced by a salted hash)', count: 1 },
        { what: 'meta.json user (replaced by a salted hash)', count: 1 },
        { what: 'meta.json server (replaced by a salted hash)', count: 1 },
        {
          what: 'the server, context and user where meta.json messages name them (replaced by their hash)',
          count: 4,
        },
      ],
    );
  });

  it('hides a name where it stands alone, and never changes what the checks match', () => {
    const f: Facts = {
      objects: [],
      nodes: {},
      meta: {
        // k3s names the context and the user "default", like the namespace
        context: 'default',
        user: 'default',
        namespace: 'default',
        readErrors: [
          { what: 'Pods in default', error: 'user "default" cannot list pods in the defaults' },
        ],
        // a node named like them: the nodes that failed the same way keep their names
        nodeErrorGroups: [
          {
            nodes: ['default', 'node-b'],
            errors: [{ command: 'ip-addr', exitCode: null, error: 'user "default": refused' }],
          },
        ],
      },
    };
    const m = redactFacts(f, { salt: 's' }).facts.meta;
    const h = saltedHash('s', 'default');
    assert.equal(m.namespace, 'default');
    assert.deepEqual(readErrorsOf({ ...f, meta: m }), [
      { what: 'Pods in default', error: `user "${h}" cannot list pods in the defaults` },
    ]);
    assert.deepEqual(m['nodeErrorGroups'], [
      {
        nodes: ['default', 'node-b'],
        errors: [{ command: 'ip-addr', exitCode: null, error: `user "${h}": refused` }],
      },
    ]);
  });

  it('does not change the Facts it was given', () => {
    const before = JSON.stringify(facts);
    redactFacts(facts);
    assert.equal(JSON.stringify(facts), before);
  });
});

describe("kube-proxy's configuration, redacted", () => {
  it('keeps the configuration file its Pod mounts, cut to what is read, and never a kubeconfig', () => {
    const conf = [
      'apiVersion: kubeproxy.config.k8s.io/v1alpha1',
      'kind: KubeProxyConfiguration',
      'mode: ipvs',
      'clusterCIDR: 10.244.0.0/16',
      'clientConnection:',
      '  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf',
      'ipvs:',
      '  scheduler: lc',
      '  tcpTimeout: 0s',
      'iptables:',
      '  masqueradeBit: 15',
      'metricsBindAddress: 0.0.0.0:10249',
      '',
    ].join('\n');
    const kubeconfig = `clusters:\n- cluster:\n    server: ${SERVER}\nusers:\n- user:\n    token: abc.def\n`;
    const objects = [
      kubeProxyPod(['/usr/local/bin/kube-proxy', '--config=/var/lib/kube-proxy/config.conf']),
      configMap('proxy-settings', { 'kubeconfig.conf': kubeconfig, 'config.conf': conf }),
    ];
    const out = redactedObjects(...objects);
    assert.deepEqual(dataOf(out[1]), {
      'config.conf': [
        'apiVersion: kubeproxy.config.k8s.io/v1alpha1',
        'kind: KubeProxyConfiguration',
        'mode: ipvs',
        'clusterCIDR: 10.244.0.0/16',
        'ipvs:',
        '  scheduler: lc',
        'iptables:',
        '  masqueradeBit: 15',
        '',
      ].join('\n'),
    });
    assert.deepEqual(kubeProxyConfigOf(clusterView(out)), kubeProxyConfigOf(clusterView(objects)));
  });

  it("keeps EKS's key and the config of a ConfigMap no Pod names; a bad file stays unreadable", () => {
    const eks = configMap('kube-proxy-config', { config: 'mode: iptables\n', other: 'x: 1' });
    assert.deepEqual(dataOf(redactedObjects(eks)[0]), { config: 'mode: iptables\n' });
    const bad = configMap('kube-proxy', { 'config.conf': 'mode: [ipvs\npassword: hunter2' });
    const out = redactedObjects(bad);
    assert.ok(!JSON.stringify(out).includes('hunter2'));
    assert.throws(() => kubeProxyConfigOf(clusterView(out)), /key config\.conf: not valid YAML/);
  });

  it('keeps the flags kdebug reads from its command line, and no other word', () => {
    const command = [
      '/usr/local/bin/kube-proxy',
      '--proxy-mode',
      'nftables',
      '--cluster-cidr=10.244.0.0/16',
      '--masquerade-all',
      '--kubeconfig=/etc/kubernetes/admin.conf',
      '--iptables-masquerade-bit=12',
      '--token',
      'hunter2',
      '--detect-local-mode',
      '--ipvs-scheduler=sh',
    ];
    const [pod] = redactedObjects(kubeProxyPod(command));
    const c = (pod!['spec'] as { containers: Record<string, unknown>[] }).containers[0]!;
    assert.deepEqual(c['command'], [
      '--proxy-mode',
      'nftables',
      '--cluster-cidr=10.244.0.0/16',
      '--masquerade-all',
      '--iptables-masquerade-bit=12',
      '--detect-local-mode',
      '--ipvs-scheduler=sh',
    ]);
    assert.equal(c['image'], 'registry.k8s.io/kube-proxy:v1.33.1', 'its version is read');
    assert.deepEqual(
      kubeProxyConfigOf(clusterView([pod!])),
      kubeProxyConfigOf(clusterView([kubeProxyPod(command)])),
    );
  });

  it('keeps the feature gates of its flag and of its file, each gate on or off and nothing else', () => {
    const conf = 'mode: nftables\nfeatureGates:\n  EndpointSliceProxying: false\n  Odd: later\n';
    const objects = [
      kubeProxyPod(['kube-proxy', '--feature-gates=KubeProxyNFTablesLocalhostNodePorts=true,X=1']),
      configMap('proxy-settings', { 'config.conf': conf }),
    ];
    const out = redactedObjects(...objects);
    const c = (out[0]!['spec'] as { containers: Record<string, unknown>[] }).containers[0]!;
    assert.deepEqual(c['command'], ['--feature-gates=KubeProxyNFTablesLocalhostNodePorts=true']);
    assert.deepEqual(dataOf(out[1]), {
      'config.conf': 'mode: nftables\nfeatureGates:\n  EndpointSliceProxying: false\n',
    });
    const read = kubeProxyConfigOf(clusterView(out));
    assert.deepEqual(read, kubeProxyConfigOf(clusterView(objects)));
    assert.deepEqual(read.featureGates, {
      EndpointSliceProxying: false,
      KubeProxyNFTablesLocalhostNodePorts: true,
    });
    // the flag's value as its own word
    const [twoWords] = redactedObjects(kubeProxyPod(['--feature-gates', 'EndpointSlice=true']));
    assert.deepEqual(kubeProxyConfigOf(clusterView([twoWords!])).featureGates, {
      EndpointSlice: true,
    });
  });

  it("keeps a Cilium agent's image, whose tag is its release where its status was not read", () => {
    const image = 'quay.io/cilium/cilium:v1.18.6@sha256:6fbe3e2b';
    const agent: KubeObject = {
      kind: 'Pod',
      metadata: {
        name: 'cilium-5xq2d',
        namespace: 'kube-system',
        labels: { 'k8s-app': 'cilium' },
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'cilium', controller: true },
        ],
      },
      spec: {
        nodeName: 'node-a',
        containers: [{ name: 'cilium-agent', image, args: ['--config-dir=/tmp/cilium'] }],
      },
    };
    const [pod] = redactedObjects(agent);
    assert.deepEqual(pod!['spec'], {
      nodeName: 'node-a',
      containers: [{ name: 'cilium-agent', image }],
    });
    const version = (objects: KubeObject[]) =>
      new Analysis({ objects, nodes: {}, meta: {} }, { code: allModes }).state('node-a').cilium
        ?.version;
    assert.equal(version([pod!]), 'v1.18.6');
    assert.equal(version([agent]), 'v1.18.6');
  });

  it('keeps no flag, image or volume of any other Pod', () => {
    const [pod] = redactedObjects({
      ...kubeProxyPod(['/web', '--proxy-mode=ipvs']),
      metadata: { name: 'web', namespace: 'kube-system', labels: { app: 'web' } },
    });
    assert.deepEqual(pod!['spec'], { containers: [{ name: 'kube-proxy' }] });
  });

  it("keeps the Node's kubelet and kube-proxy versions (the version of a kube-proxy with no Pod), and nothing else there", () => {
    const node = (nodeInfo: Record<string, string>): KubeObject => ({
      kind: 'Node',
      metadata: { name: 'node-a' },
      status: { nodeInfo: { operatingSystem: 'linux', ...nodeInfo } },
    });
    const state = (objects: KubeObject[]) => {
      const s = new Analysis({ objects, nodes: {}, meta: {} }, { code: allModes }).state('node-a');
      return [s.embeddedIn, s.version?.value.text, s.version?.from, s.version?.source];
    };
    const infos: Record<string, string>[] = [
      { kubeletVersion: 'v1.31.4+k3s1' },
      { kubeProxyVersion: 'v1.30.1' },
    ];
    for (const info of infos) {
      const objects = [node(info)];
      assert.deepEqual(state(redactedObjects(...objects)), state(objects), JSON.stringify(info));
      assert.notEqual(state(objects)[1], undefined);
    }
    // a value that is not a version is not what is read there: dropped
    const [kept] = redactedObjects(node({ kubeletVersion: 'build of 3 May', osImage: 'Ubuntu' }));
    assert.deepEqual(kept!['status'], { nodeInfo: { operatingSystem: 'linux' } });
  });
});

describe('the other ConfigMaps the checks read', () => {
  it("keeps the Corefile's kubernetes line, Cilium's kube-proxy-replacement, and no other data", () => {
    const corefile = [
      '.:53 {',
      '    errors',
      '    kubernetes corp.example in-addr.arpa {',
      '       pods insecure',
      '    }',
      '    forward . 10.1.2.3 { tls_servername dns.corp.example }',
      '}',
      '',
    ].join('\n');
    const out = redactedObjects(
      configMap('coredns', { Corefile: corefile, 'corp.db': 'secret.corp.example A 10.0.0.1' }),
      configMap('cilium-config', { 'kube-proxy-replacement': 'true', 'etcd-config': 'x' }),
      configMap('app', { password: 'hunter2' }, 'default'),
    );
    assert.deepEqual(
      out.map((o) => [o.metadata?.name, dataOf(o)]),
      [
        ['coredns', { Corefile: '    kubernetes corp.example in-addr.arpa \n' }],
        ['cilium-config', { 'kube-proxy-replacement': 'true' }],
        ['app', undefined],
      ],
    );
  });
});

describe('what meta.json says of the objects', () => {
  const objects: KubeObject[] = [
    {
      kind: 'List',
      items: [
        {
          kind: 'Service',
          metadata: {
            name: 'web',
            namespace: 'default',
            annotations: { 'example.com/owner': 'team-a' },
            labels: { app: 'web', 'k8s-app': 'web' },
          },
          spec: { clusterIP: '10.96.0.20', selector: { app: 'web' }, futureField: 'x' },
        },
        { kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { k: 'aHVudGVy' } },
      ],
    },
  ];
  const { facts, redaction } = redactFacts({ objects, nodes: {}, meta: {} });

  it('keeps the objects of the kinds read, out of their List, and drops the others', () => {
    assert.deepEqual(facts.objects, [
      {
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default', labels: { 'k8s-app': 'web' } },
        spec: { clusterIP: '10.96.0.20', selector: { app: 'web' } },
      },
    ]);
  });

  it('lists the paths kept per kind, and what was dropped by path and count, never a value', () => {
    assert.deepEqual(facts.meta['redaction'], redaction);
    assert.ok(redaction.kept['Service']!.includes('spec.ports[].targetPort'));
    assert.ok(redaction.kept['Pod']!.includes('metadata.labels.*'));
    assert.ok(redaction.kept['Pod of kube-proxy']!.includes('spec.containers[].image'));
    assert.ok(redaction.kept['Pod']!.includes('status.containerStatuses[].state.running'));
    assert.ok(
      !redaction.kept['Pod']!.some((p) => /containers\[\]\.(image|env|command|args)/.test(p)),
    );
    assert.deepEqual(redaction.removed, [
      {
        what: 'Service: fields kdebug does not read',
        count: 3,
        fields: ['metadata.annotations', 'metadata.labels (keys not read)', 'spec.futureField'],
      },
      { what: 'Secret objects (a kind kdebug does not read)', count: 1 },
    ]);
  });
});
