import assert from 'node:assert/strict';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { endpointsCheck } from '../../../src/core/checks/endpoints/endpoints.js';
import { diagnose } from '../../../src/core/diagnose.js';
import type { KubeObject } from '../../../src/core/model.js';
import { CheckContext } from '../../../src/core/checks/context.js';
import { portEndpoints } from '../../../src/core/dataplane/kube-proxy/endpoints.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import { aPod, aService, anEndpointSlice, facts, ids, run, TARGET, webPods } from './builders.js';
import { allModes } from '../../support/modes.js';

/** A next command as the person's terminal shows it. */
const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

const legacy = (ips: string[]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'web', namespace: 'default' },
  subsets: [
    {
      addresses: ips.map((ip) => ({ ip })),
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
  ],
});

describe('endpoints step', () => {
  const cases: { name: string; objects: KubeObject[]; want: string[] }[] = [
    {
      name: 'both endpoints ready',
      objects: [aService(), anEndpointSlice(), ...webPods()],
      want: ['endpoints-ready:pass'],
    },
    {
      // before: "✓ 2 of 2 endpoints ready", its line naming web-2 beside an address web-2 lacks
      name: 'an endpoint naming a Pod whose IP is another: matched by IP as well',
      objects: [
        aService(),
        anEndpointSlice({
          endpoints: [
            { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
            { ip: '10.244.1.99', node: 'node-b', pod: 'web-2' },
          ],
        }),
        ...webPods(),
      ],
      want: ['endpoints-ready:pass', 'pod-missing-from-endpoints:warn', 'endpoint-not-a-pod:warn'],
    },
    {
      // before: "✓ 2 of 2 endpoints ready", nothing said of web-2's Ready=False
      name: 'a Pod not ready that the slice still lists ready: the slice lags the Pod',
      objects: [
        aService(),
        anEndpointSlice(),
        aPod({ name: 'web-1' }),
        aPod({ name: 'web-2', ip: '10.244.1.6', node: 'node-b', ready: false, why: 'probe' }),
      ],
      want: ['endpoints-ready:pass', 'endpoint-not-ready:warn'],
    },
    {
      name: 'one of two not ready',
      objects: [
        aService(),
        anEndpointSlice({
          endpoints: [
            { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
            { ip: '10.244.1.6', node: 'node-b', pod: 'web-2', ready: false },
          ],
        }),
        aPod({ name: 'web-1' }),
        aPod({ name: 'web-2', ip: '10.244.1.6', node: 'node-b', ready: false, why: 'probe' }),
      ],
      want: ['endpoints-ready:pass', 'endpoint-not-ready:warn'],
    },
    {
      name: 'none ready',
      objects: [
        aService(),
        anEndpointSlice({
          endpoints: [
            { ip: '10.244.0.5', pod: 'web-1', ready: false },
            { ip: '10.244.1.6', pod: 'web-2', ready: false },
          ],
        }),
        ...webPods({ ready: false, why: 'probe' }),
      ],
      // why each endpoint is not ready is the cause: the missing ready endpoints follow from it
      want: ['endpoint-not-ready:fail', 'endpoint-not-ready:fail', 'no-ready-endpoints:warn'],
    },
    {
      name: 'no EndpointSlice at all, its Pods ready',
      objects: [aService(), ...webPods()],
      // the ready Pods no slice lists are the root; no ready endpoint follows from them
      want: ['pod-missing-from-endpoints:fail', 'no-ready-endpoints:warn'],
    },
    {
      name: 'no EndpointSlice and no ready Pod',
      objects: [aService(), ...webPods({ ready: false, why: 'probe' })],
      want: ['no-ready-endpoints:fail'],
    },
    {
      name: 'only terminating, still serving',
      objects: [
        aService(),
        anEndpointSlice({
          endpoints: [
            { ip: '10.244.0.5', pod: 'web-1', ready: false, serving: true, terminating: true },
          ],
        }),
        aPod(),
      ],
      want: ['only-terminating-endpoints:warn'],
    },
    {
      name: 'legacy Endpoints behind the slices',
      objects: [aService(), anEndpointSlice(), ...webPods(), legacy(['10.244.0.5'])],
      want: ['endpoints-ready:pass', 'endpoints-disagree:warn'],
    },
    {
      name: 'legacy Endpoints agreeing',
      objects: [aService(), anEndpointSlice(), ...webPods(), legacy(['10.244.1.6', '10.244.0.5'])],
      want: ['endpoints-ready:pass'],
    },
    {
      name: 'a ready Pod the slices do not list',
      objects: [
        aService(),
        anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', pod: 'web-1' }] }),
        ...webPods(),
      ],
      want: ['endpoints-ready:pass', 'pod-missing-from-endpoints:warn'],
    },
    {
      name: 'a ready Pod that keeps restarting',
      objects: [aService(), anEndpointSlice(), ...webPods({ restarts: 7 })],
      want: ['endpoints-ready:pass', 'pod-restarting:warn', 'pod-restarting:warn'],
    },
    {
      name: 'publishNotReadyAddresses is said',
      objects: [
        aService({ spec: { publishNotReadyAddresses: true } }),
        anEndpointSlice(),
        ...webPods(),
      ],
      want: ['endpoints-ready:pass', 'publish-not-ready-addresses:pass'],
    },
  ];
  for (const c of cases)
    it(c.name, () => assert.deepEqual(ids(run(endpointsCheck, facts(c.objects))), c.want));

  it('counts no endpoint another finding of the step doubts in its pass (before: "2 of 2 ready")', () => {
    const title = (objects: KubeObject[]) =>
      run(endpointsCheck, facts(objects)).find((f) => f.id === 'endpoints-ready')?.title;
    const misnamed = anEndpointSlice({
      endpoints: [
        { ip: '10.244.0.5', node: 'node-a', pod: 'web-1' },
        { ip: '10.244.1.99', node: 'node-b', pod: 'web-2' },
      ],
    });
    assert.equal(
      title([aService(), misnamed, ...webPods()]),
      '80/TCP: 1 of 2 endpoints ready; 1 more listed ready, in doubt (below)',
    );
    const unready = aPod({ name: 'web-2', ip: '10.244.1.6', node: 'node-b', ready: false });
    assert.equal(
      title([aService(), anEndpointSlice(), aPod({ name: 'web-1' }), unready]),
      '80/TCP: 1 of 2 endpoints ready; 1 more listed ready, in doubt (below)',
    );
    // every ready endpoint in doubt: no pass at all, their findings say why
    const both = [aPod({ name: 'web-1', ready: false }), unready];
    assert.equal(title([aService(), anEndpointSlice(), ...both]), undefined);
  });

  it('says why a Pod is not ready, and where to look', () => {
    const objects = [
      aService(),
      anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', pod: 'web-1', ready: false }] }),
    ];
    const probe = run(
      endpointsCheck,
      facts([...objects, aPod({ ready: false, why: 'probe' })]),
    )[0]!;
    assert.equal(probe.title, 'Pod web-1 is not ready: readiness probe failing');
    assert.match(
      probe.explanation,
      /its readiness probe \(httpGet \/ready on port 8080\) is failing while container app runs/,
    );
    assert.equal(line(probe.next), 'kubectl -n default describe pod web-1');
    const crash = run(
      endpointsCheck,
      facts([...objects, aPod({ ready: false, why: 'crash', restarts: 9 })]),
    )[0]!;
    assert.equal(crash.title, 'Pod web-1 is not ready: CrashLoopBackOff');
    assert.match(
      crash.explanation,
      /keeps crashing \(CrashLoopBackOff after 9 restarts, last exit code 1\)/,
    );
    assert.equal(line(crash.next), 'kubectl -n default logs web-1 --previous');
  });

  it('tells a failing readiness check from a dead application with a direct probe', () => {
    const objects = [
      aService(),
      anEndpointSlice({ endpoints: [{ ip: '10.244.0.5', pod: 'web-1', ready: false }] }),
      aPod({ ready: false, why: 'probe' }),
    ];
    const ok =
      'Connection to 10.244.0.5 8080 port [tcp/*] succeeded!\nkdebug-probe tcp-connect tool=nc exit=0\n';
    const f = run(
      endpointsCheck,
      facts(objects, { 'node-a': { 'tcp-connect_10.244.0.5_8080': ok } }),
    )[0]!;
    assert.match(f.explanation, /does accept connections on port 8080/);
    assert.ok(
      f.evidence.map(evidenceText).includes('node-a: TCP connect 10.244.0.5:8080: connected'),
    );
  });

  it('a Service whose slice is gone: its ready Pods are the root, the rest is what kube-proxy would do', () => {
    const [root, none] = run(endpointsCheck, facts([aService(), ...webPods()]));
    assert.equal(root!.title, '2 ready Pods selected, but the Service has no EndpointSlice');
    assert.match(root!.explanation, /no EndpointSlice of default\/web exists: it was deleted/);
    assert.ok(
      root!.evidence
        .map(evidenceText)
        .includes('no EndpointSlice has label kubernetes.io/service-name=web'),
    );
    // said from the API alone: what kube-proxy would do, never what the nodes do now
    assert.match(none!.explanation, /clients would get "connection refused"/);
    assert.match(none!.explanation, /follows from pod-missing-from-endpoints \(Endpoints\)/);
  });

  it('a headless Service without ready endpoints has no DNS records', () => {
    const f = run(
      endpointsCheck,
      facts([aService({ spec: { clusterIP: 'None', clusterIPs: ['None'] } }), ...webPods()]),
    ).find((x) => x.id === 'no-ready-endpoints');
    assert.match(f!.explanation, /NXDOMAIN/);
  });

  it('is a warning, not a second failure, when the selector matches nothing', () => {
    const report = diagnose(
      facts([aService({ spec: { selector: { app: 'wbe' } } }), ...webPods()]),
      TARGET,
      { code: allModes },
    );
    const step = report.steps.find((s) => s.id === 'endpoints')!;
    assert.deepEqual(ids(step.findings), ['no-ready-endpoints:warn']);
    assert.match(
      step.findings[0]!.explanation,
      /follows from selector-matches-no-pods \(Selector\)/,
    );
  });
});

describe('Endpoints of a dual-stack Service, per family', () => {
  const SNAPSHOT = 'snapshots/dual-stack-ipv6-rules-missing';
  const NGINX = { namespace: 'default', service: 'nginx-svc' };
  /** The scenario with its IPv6 EndpointSlice's endpoints made `ready`. */
  const withIPv6 = async (ready: boolean) => {
    const f = await readSnapshot(SNAPSHOT);
    const objects = f.objects.map((o) => {
      if (o.kind !== 'EndpointSlice' || o['addressType'] !== 'IPv6') return o;
      const slice = structuredClone(o) as KubeObject & { endpoints: { conditions: object }[] };
      for (const e of slice.endpoints) e.conditions = { ready, serving: ready, terminating: false };
      return slice;
    });
    return { ...f, objects };
  };

  it('both families ready: one pass, counted as Pods', async () => {
    assert.deepEqual(ids(run(endpointsCheck, await withIPv6(true), {}, NGINX)), [
      'endpoints-ready:pass',
    ]);
  });

  it('IPv6 endpoints all not ready while IPv4 works: fails, the family named', async () => {
    const found = run(endpointsCheck, await withIPv6(false), {}, NGINX);
    const bad = found.find((x) => x.id === 'no-ready-endpoints')!;
    assert.equal(bad.status, 'fail');
    assert.equal(bad.title, 'IPv6: 8080/TCP: no ready endpoints');
    assert.match(bad.explanation, /IPv6 cluster IP fd00:10:96::be/);
    assert.ok(
      bad.evidence.map(evidenceText).every((e) => e.includes('fd00:')),
      bad.evidence.map(evidenceText).join('\n'),
    );
    const good = found.find((x) => x.id === 'endpoints-ready')!;
    assert.equal(good.title, 'IPv4: 8080/TCP: 2 of 2 endpoints ready');
  });

  it("gives each family's finding its endpoints' own lines, an address whose text another's begins not taken for it", async () => {
    const f = await withIPv6(false);
    // a slice of the old targetPort, its copy of a ready Pod's address not ready: 10.244.0.3:8080
    // begins with the text of the ready 10.244.0.3:80
    const v4 = f.objects.find(
      (o) =>
        o.kind === 'EndpointSlice' &&
        o['addressType'] === 'IPv4' &&
        o.metadata?.labels?.['kubernetes.io/service-name'] === 'nginx-svc',
    )!;
    const old = structuredClone(v4) as KubeObject & {
      endpoints: { addresses: string[]; conditions: object }[];
      ports: { port: number }[];
    };
    old.metadata = { ...old.metadata, name: 'nginx-svc-old' };
    old.endpoints = [{ addresses: ['10.244.0.3'], conditions: { ready: false } }];
    old.ports[0]!.port = 8080;
    f.objects.push(old);
    const found = run(endpointsCheck, f, {}, NGINX);
    const bad = found.find((x) => x.id === 'no-ready-endpoints')!;
    const lines = bad.evidence.map(evidenceText);
    assert.ok(
      lines.some((e) => e.startsWith('EndpointSlice nginx-svc-old: 10.244.0.3:8080 not ready')),
      lines.join('\n'),
    );
    assert.ok(!lines.some((e) => e.includes('10.244.0.3:80 ')), lines.join('\n'));
    const good = found.find((x) => x.id === 'endpoints-ready')!;
    assert.equal(good.title, 'IPv4: 8080/TCP: 2 of 3 endpoints ready');
    assert.equal(good.evidence.length, 3, good.evidence.map(evidenceText).join('\n'));
  });
});

describe('an endpoint two slices list', () => {
  // the same Pod address in two slices, written two ways, ready in one copy only: the Endpoints
  // step and the rules kdebug expects keep the same copy, whichever slice comes first
  const copies = (first: 'ready' | 'not ready') => {
    const slice = (name: string, ip: string, ready: boolean) => ({
      ...anEndpointSlice({ endpoints: [{ ip, node: 'node-b', pod: 'web-2', ready }] }),
      addressType: 'IPv6',
      metadata: {
        name,
        namespace: 'default',
        labels: { 'kubernetes.io/service-name': 'web' },
      },
    });
    const a = slice('web-aaaaa', 'fd00:0:0::6', first === 'ready');
    const b = slice('web-bbbbb', 'fd00::6', first !== 'ready');
    return [aService(), a, b];
  };
  for (const first of ['ready', 'not ready'] as const)
    it(`keeps the ready copy once, canonical, when the ${first} one comes first`, () => {
      const objects = copies(first);
      const ctx = new CheckContext(facts(objects), TARGET, { code: allModes });
      const port = ctx.service!.ports[0]!;
      const listed = ctx.endpointsOf(ctx.service!, port);
      assert.deepEqual(
        listed.map((e) => [e.ip, e.ready]),
        [['fd00::6', true]],
      );
      const expected = portEndpoints(
        clusterView(objects).endpointSlices,
        port,
        'node-a',
        undefined,
        'IPv6',
      );
      assert.deepEqual(
        expected.map((e) => [e.ip, e.ready]),
        [['fd00::6', true]],
      );
    });
});
