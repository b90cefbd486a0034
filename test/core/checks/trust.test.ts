// Causes graded as causes, and explanations that name only what the evidence leaves open: a
// NetworkPolicy evaluated for the Service's port, a probe a traffic policy drops by design, a
// kube-proxy its own metrics show in sync, an endpoint address no Pod has, a next command that
// does not repeat the way that just failed.
// IP conventions: Pods 10.244.0.5 (node-a), 10.244.1.6 (node-b); Service web 10.96.0.50:80 ->
// 8080; nodes 192.0.2.10 (node-a), 192.0.2.11 (node-b); an outside address 192.0.2.99.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reachabilityCheck } from '../../../src/core/checks/reachability/reachability.js';
import { endpointsCheck } from '../../../src/core/checks/endpoints/endpoints.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import { resolveNext } from '../../../src/core/findings/next-command.js';
import type { Facts, KubeObject } from '../../../src/core/model.js';
import {
  aPod,
  aService,
  anEndpointSlice,
  dumpFor,
  facts,
  healthy,
  ids,
  probeOut,
  replace,
  run,
} from './builders.js';

const VIP = '10.96.0.50';

const policy = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name, namespace: 'default' },
  spec: { policyTypes: ['Ingress'], ...spec },
});

describe('a NetworkPolicy is evaluated for the Service port', () => {
  const reach = (...policies: KubeObject[]) =>
    run(reachabilityCheck, facts([...healthy(), ...policies])).filter(
      (f) => f.id === 'network-policy-applies',
    );
  const web = { matchLabels: { app: 'web' } };
  const cases: [string, KubeObject[], string[], RegExp?][] = [
    [
      'no ingress rule: nothing admitted, a warning',
      [policy('deny-all', { podSelector: {} })],
      ['network-policy-applies:warn'],
      /admits no connection to 80\/TCP: every client times out/,
    ],
    [
      'two policies are judged together, and said as two',
      [
        policy('deny-all', { podSelector: {} }),
        policy('metrics', { podSelector: web, ingress: [{ ports: [{ port: 9090 }] }] }),
      ],
      ['network-policy-applies:warn'],
      /^NetworkPolicies deny-all and metrics admit no connection to 80\/TCP/,
    ],
    [
      'a rule for another port only: nothing admitted to this one',
      [policy('metrics', { podSelector: web, ingress: [{ ports: [{ port: 9090 }] }] })],
      ['network-policy-applies:warn'],
    ],
    [
      'some sources, by Pod label and namespace',
      [
        policy('frontend', {
          podSelector: web,
          ingress: [
            {
              from: [
                { podSelector: { matchLabels: { role: 'frontend' } } },
                { namespaceSelector: { matchLabels: { team: 'ops' } } },
              ],
              ports: [{ protocol: 'TCP', port: 8080 }],
            },
          ],
        }),
      ],
      ['network-policy-applies:pass'],
      /admits only Pods role=frontend in namespace default and every Pod in namespaces team=ops to 80\/TCP/,
    ],
    [
      'a named port and an endPort range are read as the API defines them',
      [
        policy('range', {
          podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
          ingress: [{ ports: [{ port: 8000, endPort: 8100 }] }],
        }),
      ],
      ['network-policy-applies:pass'],
      /admits every source to 80\/TCP/,
    ],
    [
      "a policy naming the container's port (http) admits the Service's numeric targetPort 8080",
      [policy('named', { podSelector: web, ingress: [{ ports: [{ port: 'http' }] }] })],
      ['network-policy-applies:pass'],
      /admits every source to 80\/TCP/,
    ],
    [
      'a policy whose matchExpressions exclude the Pods is not theirs',
      [
        policy('other', {
          podSelector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] },
        }),
      ],
      [],
    ],
    [
      'policies add up: one admitting everyone makes the deny-all moot',
      [
        policy('deny-all', { podSelector: {} }),
        policy('open', { podSelector: web, ingress: [{}] }),
      ],
      ['network-policy-applies:pass'],
    ],
  ];
  for (const [what, policies, want, title] of cases)
    it(what, () => {
      const found = reach(...policies);
      assert.deepEqual(ids(found), want);
      if (title) assert.match(found[0]!.title, title);
      for (const f of found) {
        assert.ok(f.evidence.every((e) => e.kind === 'read'));
        assert.ok(
          f.evidence.some((e) => /^NetworkPolicy default\/\S+: podSelector: /.test(e.text)),
        );
        assert.match(f.explanation, /probes come from the nodes/);
      }
    });
});

describe('a NetworkPolicy is evaluated for the client the person named (--from pod/NAME)', () => {
  const frontendOnly = policy('frontend-only', {
    podSelector: { matchLabels: { app: 'web' } },
    ingress: [
      {
        from: [
          { podSelector: { matchLabels: { role: 'frontend' } } },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ops' } } },
          { ipBlock: { cidr: '10.244.9.0/24', except: ['10.244.9.128/25'] } },
        ],
        ports: [{ port: 8080 }],
      },
    ],
  });
  const client = (o: {
    name: string;
    namespace?: string;
    labels: Record<string, string>;
    ip: string;
  }) => aPod({ ...o, node: 'node-b', owner: { kind: 'ReplicaSet', name: 'client-1' } });
  const reach = (
    pod: KubeObject,
    from: { namespace?: string; name: string },
    ...more: KubeObject[]
  ) =>
    run(reachabilityCheck, facts([...healthy(), pod, ...more]), {
      client: { kind: 'pod', ...from },
    }).filter((f) => f.id === 'network-policy-applies');
  const cases: [
    string,
    KubeObject,
    { namespace?: string; name: string },
    KubeObject[],
    string,
    RegExp,
  ][] = [
    [
      'a client whose labels no rule admits: a warning naming it, with its labels as evidence',
      client({ name: 'debug', labels: { run: 'debug' }, ip: '10.244.1.9' }),
      { name: 'debug' },
      [frontendOnly],
      'network-policy-applies:warn',
      /does not admit Pod default\/debug \(--from\) to 80\/TCP: its connections time out/,
    ],
    [
      'a client the podSelector admits: the pass says so',
      client({ name: 'shop', labels: { role: 'frontend' }, ip: '10.244.1.9' }),
      { name: 'shop' },
      [frontendOnly],
      'network-policy-applies:pass',
      /admits only/,
    ],
    [
      "a client in another namespace, admitted by that namespace's own name label",
      client({ name: 'probe', namespace: 'ops', labels: { run: 'probe' }, ip: '10.244.1.9' }),
      { namespace: 'ops', name: 'probe' },
      [frontendOnly],
      'network-policy-applies:pass',
      /admits only/,
    ],
    [
      'a client admitted by an ipBlock, and one in its except refused',
      client({ name: 'legacy', labels: { run: 'legacy' }, ip: '10.244.9.200' }),
      { name: 'legacy' },
      [frontendOnly],
      'network-policy-applies:warn',
      /does not admit Pod default\/legacy/,
    ],
  ];
  for (const [what, pod, from, policies, want, title] of cases)
    it(what, () => {
      const found = reach(pod, from, ...policies);
      assert.deepEqual(ids(found), [want]);
      assert.match(found[0]!.title, title);
      assert.ok(found[0]!.evidence.every((e) => e.kind === 'read'));
      assert.ok(found[0]!.evidence.some((e) => /^Pod \S+: labels /.test(e.text)));
    });

  it('each Pod takes what the policies selecting it admit: one that refuses the client is named', () => {
    const onlyWeb1 = policy('web-1-only', {
      podSelector: { matchLabels: { 'statefulset.kubernetes.io/pod-name': 'web-1' } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: 'frontend' } } }] }],
    });
    const labelled = healthy().map((o) =>
      o.kind === 'Pod' && o.metadata?.name === 'web-1'
        ? {
            ...o,
            metadata: {
              ...o.metadata,
              labels: { ...o.metadata.labels, 'statefulset.kubernetes.io/pod-name': 'web-1' },
            },
          }
        : o,
    );
    const found = run(
      reachabilityCheck,
      facts([
        ...labelled,
        client({ name: 'debug', labels: { run: 'debug' }, ip: '10.244.1.9' }),
        onlyWeb1,
      ]),
      { client: { kind: 'pod', name: 'debug' } },
    ).filter((f) => f.id === 'network-policy-applies');
    assert.deepEqual(ids(found), ['network-policy-applies:warn']);
    assert.match(
      found[0]!.title,
      /does not admit Pod default\/debug \(--from\) to 80\/TCP on 1 Pod of 2 \(web-1\)/,
    );
  });

  it('a peer with a Pod and a namespace selector needs both: the Pod selector alone refuses', () => {
    const both = policy('both', {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [
        {
          from: [
            {
              podSelector: { matchLabels: { role: 'frontend' } },
              namespaceSelector: { matchLabels: { team: 'x' } },
            },
          ],
        },
      ],
    });
    const found = reach(
      client({ name: 'debug', labels: { run: 'debug' }, ip: '10.244.1.9' }),
      { name: 'debug' },
      both,
    );
    assert.deepEqual(ids(found), ['network-policy-applies:warn']);
  });

  it("an ipBlock holding the client's address, or a client on its node's network: cannot tell, said", () => {
    const block = policy('block', {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [{ from: [{ ipBlock: { cidr: '10.244.0.0/16' } }] }],
    });
    const inBlock = reach(
      client({ name: 'debug', labels: {}, ip: '10.244.1.9' }),
      { name: 'debug' },
      block,
    );
    assert.deepEqual(ids(inBlock), ['network-policy-applies:pass']);
    assert.match(
      inBlock[0]!.explanation,
      /cannot tell: its ipBlock 10\.244\.0\.0\/16 holds the Pod's address/,
    );
    const host = client({ name: 'agent', labels: { role: 'frontend' }, ip: '192.0.2.11' });
    (host['spec'] as Record<string, unknown>)['hostNetwork'] = true;
    const frontend = policy('frontend', {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: 'frontend' } } }] }],
    });
    const onHost = reach(host, { name: 'agent' }, frontend);
    assert.deepEqual(ids(onHost), ['network-policy-applies:pass']);
    assert.match(onHost[0]!.explanation, /cannot tell: the client runs on its node's network/);
  });

  it('a --from Pod kdebug did not read: said, never taken as admitted', () => {
    const found = run(reachabilityCheck, facts([...healthy(), frontendOnly]), {
      client: { kind: 'pod', name: 'gone' },
    }).filter((f) => f.id === 'network-policy-applies');
    assert.match(
      found[0]!.explanation,
      /Pod default\/gone \(--from\) was not read, so kdebug cannot tell/,
    );
    assert.ok(found[0]!.evidence.some((e) => e.kind === 'not-observed' && /gone/.test(e.text)));
  });

  it('a namespaceSelector on labels kdebug did not read: cannot tell, said, not a warning', () => {
    const byTeam = policy('team', {
      podSelector: { matchLabels: { app: 'web' } },
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'ops' } } }] }],
    });
    const found = reach(
      client({ name: 'probe', namespace: 'ops', labels: {}, ip: '10.244.1.9' }),
      { namespace: 'ops', name: 'probe' },
      byTeam,
    );
    assert.deepEqual(ids(found), ['network-policy-applies:pass']);
    assert.match(
      found[0]!.explanation,
      /kdebug cannot tell: it selects namespaces by labels kdebug did not read \(team=ops\)/,
    );
  });
});

describe('a symptom is never graded worse than its cause', () => {
  it('internalTrafficPolicy Local: the probe from a node without a local endpoint is dropped by design', () => {
    const objects = replace(
      replace(healthy(), 'Service', 'web', aService({ spec: { internalTrafficPolicy: 'Local' } })),
      'EndpointSlice',
      'web-abcde',
      anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', node: 'node-a', pod: 'web-1' }] }),
    );
    const found = run(
      reachabilityCheck,
      facts(objects, {
        'node-a': { [`tcp-connect_${VIP}_80`]: probeOut.tcpOk(VIP, 80) },
        'node-b': { [`tcp-connect_${VIP}_80`]: probeOut.tcpTimeout() },
      }),
    ).filter((f) => f.id.startsWith('clusterip-'));
    assert.deepEqual(ids(found), ['clusterip-unreachable:warn', 'clusterip-reachable:pass']);
    assert.match(found[0]!.title, /dropped on node-b, as internalTrafficPolicy Local does there/);
    assert.match(found[0]!.explanation, /as designed/);
  });
});

describe('an explanation names only the causes its evidence leaves open', () => {
  const stale = () =>
    replace(
      healthy(),
      'EndpointSlice',
      'web-abcde',
      anEndpointSlice({
        endpoints: [
          { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
          { ip: '10.244.1.9', node: 'node-b', pod: 'web-2' },
        ],
      }),
    );
  const metrics = (last: number, queued: number) =>
    `kubeproxy_sync_proxy_rules_last_timestamp_seconds ${last}\nkubeproxy_sync_proxy_rules_last_queued_timestamp_seconds ${queued}\n`;
  const rulesOn = (proxyMetrics?: string) =>
    run(
      rulesCheck,
      facts(healthy(), {
        'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a') },
        'node-b': {
          'iptables-save': dumpFor(stale(), 'node-b'),
          ...(proxyMetrics ? { 'proxy-metrics': proxyMetrics } : {}),
        },
      }),
    ).find((f) => f.id === 'endpoint-stale')!;

  it('a kube-proxy not shown in sync is told to look for its sync errors', () => {
    assert.match(rulesOn().explanation, /has not applied the current Services/);
    assert.match(rulesOn(metrics(100, 200)).explanation, /has not applied the current Services/);
  });

  it('a kube-proxy its metrics show in sync is not: the rules changed after its last sync', () => {
    const f = rulesOn(metrics(200, 100));
    assert.doesNotMatch(f.explanation, /has not applied|sync or iptables-restore errors/);
    assert.match(f.explanation, /changed after that sync/);
    // before: its Next was still that kube-proxy's log, which shows nothing of another writer
    const next = f.next && resolveNext(f.next).argv.join(' ');
    assert.match(next ?? '', /^kubectl -n kube-system delete pod kube-proxy-\S+$/);
  });

  const handMade = (ip: string, more: KubeObject[] = []) =>
    replace(
      replace(
        [...healthy(), ...more],
        'Service',
        'web',
        aService({ spec: { selector: undefined } }),
      ),
      'EndpointSlice',
      'web-abcde',
      anEndpointSlice({ endpoints: [{ ip }] }),
    );
  const lookedUp = (f: Facts, ...ips: string[]): Facts => ({
    ...f,
    meta: { ...f.meta, podIPLookups: ips },
  });

  it('an endpoint address no Pod has is said as such before any network cause', () => {
    const objects = handMade('192.0.2.99');
    const eps = run(endpointsCheck, lookedUp(facts(objects), '192.0.2.99')).find(
      (f) => f.id === 'endpoint-not-a-pod',
    )!;
    assert.equal(eps.title, "192.0.2.99 is no Pod's address");
    assert.ok(eps.evidence.some((e) => e.kind === 'read' && /status\.podIP.*: none$/.test(e.text)));
    const reach = run(
      reachabilityCheck,
      lookedUp(
        facts(objects, { 'node-a': { 'tcp-connect_192.0.2.99_8080': probeOut.tcpTimeout() } }),
        '192.0.2.99',
      ),
    ).find((f) => f.id === 'endpoint-unreachable')!;
    assert.match(reach.explanation, /^No Pod and no node has 192\.0\.2\.99/);
    assert.doesNotMatch(reach.explanation, /Pod network|overlay/);
  });

  it("an address nobody looked up by address is not said to be no Pod's: only the Service's Pods were read", () => {
    const objects = handMade('192.0.2.99');
    const probes = { 'node-a': { 'tcp-connect_192.0.2.99_8080': probeOut.tcpTimeout() } };
    const eps = run(endpointsCheck, facts(objects));
    assert.deepEqual(
      eps.filter((f) => f.id.startsWith('endpoint-')).map((f) => `${f.id}:${f.status}`),
      ['endpoint-holder-not-observed:skip'],
    );
    const unknown = eps.find((f) => f.id === 'endpoint-holder-not-observed')!;
    assert.deepEqual(
      unknown.evidence.map((e) => [e.kind, e.text]),
      [['not-observed', '192.0.2.99: the run did not look up the Pods by that address']],
    );
    assert.deepEqual(resolveNext(unknown.next!).argv, [
      ...['kubectl', 'get', 'pods', '-A', '-o', 'wide'],
      ...['--field-selector', 'status.podIP=192.0.2.99'],
    ]);
    const reach = run(reachabilityCheck, facts(objects, probes)).find(
      (f) => f.id === 'endpoint-unreachable',
    )!;
    assert.doesNotMatch(reach.explanation, /No Pod and no node has/);
  });

  it('a lookup RBAC refused: the address is not judged, and the refusal is why', () => {
    const refused: Facts = {
      ...facts(handMade('192.0.2.99')),
      meta: {
        readErrors: [
          {
            what: 'Pods with address 192.0.2.99',
            read: { resource: 'pods', podIP: '192.0.2.99' },
            error: 'access denied by RBAC: user "dev" cannot list pods at the cluster scope',
            reason: 'forbidden',
          },
        ],
      },
    };
    const eps = run(endpointsCheck, refused);
    const f = eps.find((x) => x.id === 'endpoint-holder-not-observed')!;
    assert.match(
      f.evidence[0]!.text,
      /^192\.0\.2\.99: the read of Pods with address 192\.0\.2\.99 failed: access denied by RBAC/,
    );
    // the other Pods were read: a refused lookup by address is not "the Pods were not captured"
    assert.ok(!eps.some((x) => x.id === 'endpoint-pod-gone' || x.id === 'pods-not-observed'));
  });

  it('every Pod of the cluster read (snapshot save --all -A): no lookup needed', () => {
    const all: Facts = { ...facts(handMade('192.0.2.99')), meta: { everyPodRead: true } };
    const eps = run(endpointsCheck, all);
    assert.ok(eps.some((f) => f.id === 'endpoint-not-a-pod'));
    assert.ok(!eps.some((f) => f.id === 'endpoint-holder-not-observed'));
  });

  it("a dual-stack cluster's Nodes say so, whatever Pods were read: an IPv6 address is out of a lookup's sight", () => {
    const dual = (ip: string) =>
      handMade(ip).map((o) =>
        o.kind === 'Node'
          ? { ...o, spec: { ...(o['spec'] as object), podCIDRs: ['10.244.0.0/24', 'fd00::/64'] } }
          : o,
      );
    const eps = run(endpointsCheck, lookedUp(facts(dual('fd00::6')), 'fd00::6'));
    assert.equal(
      eps.find((f) => f.id === 'endpoint-not-a-pod'),
      undefined,
    );
    const f = eps.find((x) => x.id === 'endpoint-holder-not-observed')!;
    assert.match(f.evidence[0]!.text, /an IPv4 one first$/);
    // the first family's addresses are in sight
    const v4 = run(endpointsCheck, lookedUp(facts(dual('192.0.2.99')), '192.0.2.99'));
    assert.ok(v4.some((x) => x.id === 'endpoint-not-a-pod'));
  });

  it('a Service of both families (Calico, Cilium IPAM: no Pod CIDRs on the Nodes): no claim either way', () => {
    const twoFamilies = aService({
      name: 'both',
      spec: { clusterIP: '10.96.0.60', clusterIPs: ['10.96.0.60', 'fd00:96::60'] },
    });
    const objects = handMade('192.0.2.99', [twoFamilies]);
    const eps = run(endpointsCheck, lookedUp(facts(objects), '192.0.2.99'));
    assert.equal(
      eps.find((f) => f.id === 'endpoint-not-a-pod'),
      undefined,
    );
    assert.ok(eps.some((f) => f.id === 'endpoint-holder-not-observed'));
  });

  it("a dual-stack Pod's second address is out of a lookup's sight: no claim", () => {
    const twoFamilies = aPod({ name: 'v6-first', ip: 'fd00::5', labels: { app: 'other' } });
    (twoFamilies['status'] as Record<string, unknown>)['podIPs'] = [
      { ip: 'fd00::5' },
      { ip: '10.244.9.9' },
    ];
    const objects = handMade('192.0.2.99', [twoFamilies]);
    const eps = run(endpointsCheck, lookedUp(facts(objects), '192.0.2.99'));
    assert.equal(
      eps.find((f) => f.id === 'endpoint-not-a-pod'),
      undefined,
    );
    const f = eps.find((x) => x.id === 'endpoint-holder-not-observed')!;
    assert.match(f.evidence[0]!.text, /sees a Pod's first address only.*an IPv6 one first$/);
  });
});

describe('a next command never repeats the way that just failed', () => {
  for (const via of ['pod', 'ssh', 'kube-proxy'])
    it(`--via ${via} failed on a node: another way is offered`, () => {
      const f = facts(healthy(), { 'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a') } });
      f.meta['nodeErrors'] = [
        { node: 'node-b', command: 'iptables-save', exitCode: null, error: 'could not reach it' },
      ];
      const found = run(rulesCheck, f, { invocation: { via } }).find(
        (x) => x.id === 'rules-not-read',
      )!;
      const argv = found.next!.argv;
      assert.notEqual(argv[argv.indexOf('--via') + 1], via, argv.join(' '));
      assert.ok(!evidenceText(found.evidence[0]!).includes('not observed'));
    });
  it('without --via every way was tried: the ones that need --yes or a key are offered', () => {
    const f = facts(healthy(), { 'node-a': { 'iptables-save': dumpFor(healthy(), 'node-a') } });
    f.meta['nodeErrors'] = [
      { node: 'node-b', command: 'iptables-save', exitCode: null, error: 'could not reach it' },
    ];
    const found = run(rulesCheck, f, { invocation: {} }).find((x) => x.id === 'rules-not-read')!;
    assert.equal(found.advice, 'Read it another way: --via pod --yes or --via ssh.');
    assert.deepEqual(found.next!.argv.slice(-3), ['--via', 'pod', '--yes']);
    // with --yes the debug Pod was tried too: SSH is what is left
    const tried = run(rulesCheck, f, { invocation: { yes: true } }).find(
      (x) => x.id === 'rules-not-read',
    )!;
    assert.equal(tried.advice, 'Read it another way: --via ssh.');
  });
});

describe('a next command carries the flags the run used', () => {
  it('--kubeconfig and --context reach kubectl and kdebug; a snapshot run keeps its snapshot', () => {
    const how = { kubeconfig: '/tmp/k config', context: 'prod' };
    assert.deepEqual(resolveNext({ argv: ['kubectl', 'get', 'nodes'] }, how).argv, [
      'kubectl',
      '--kubeconfig',
      '/tmp/k config',
      '--context',
      'prod',
      'get',
      'nodes',
    ]);
    assert.deepEqual(resolveNext({ argv: ['kdebug', 'svc', 'web'] }, how).argv, [
      'kdebug',
      'svc',
      'web',
      '--context',
      'prod',
      '--kubeconfig',
      '/tmp/k config',
    ]);
    assert.deepEqual(
      resolveNext({ argv: ['kdebug', 'drift'] }, { ...how, snapshot: 'snap' }).argv,
      ['kdebug', 'drift', '--snapshot', 'snap'],
    );
  });
});

describe('probes a live run does not make by design are said apart', () => {
  it('endpoints past the first 16 of a port: one count, not one line per address and node', () => {
    const eps = Array.from({ length: 20 }, (_, i) => ({
      ip: `10.244.0.${10 + i}`,
      node: 'node-a',
    }));
    const objects = replace(
      healthy(),
      'EndpointSlice',
      'web-abcde',
      anEndpointSlice({ endpoints: eps }),
    );
    const probes: Record<string, string> = {
      [`tcp-connect_${VIP}_80`]: probeOut.tcpOk(VIP, 80),
    };
    for (const e of eps.slice(0, 16))
      probes[`tcp-connect_${e.ip}_8080`] = probeOut.tcpOk(e.ip, 8080);
    const found = run(reachabilityCheck, facts(objects, { 'node-a': probes }));
    const blind = found.filter((f) => f.id === 'probe-not-observed');
    assert.deepEqual(
      blind.map((f) => f.title),
      ['4 endpoints past the first 16 not probed'],
    );
    assert.match(blind[0]!.explanation, /kdebug probes the first 16 endpoints of each port/);
    assert.equal(blind[0]!.evidence.length, 1);
  });
});
