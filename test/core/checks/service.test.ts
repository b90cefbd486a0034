import assert from 'node:assert/strict';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import { describe, it } from 'node:test';
import { serviceCheck, similarServices } from '../../../src/core/checks/service.js';
import { aService, facts, ids, listedWhole, run, TARGET } from './builders.js';

/** A next command as the person's terminal shows it. */
const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

describe('service step', () => {
  const cases: {
    name: string;
    objects: ReturnType<typeof aService>[];
    want: string[];
    text?: RegExp;
  }[] = [
    {
      name: 'a ClusterIP Service',
      objects: [aService()],
      want: ['service-found:pass'],
      text: /^ClusterIP 10\.96\.0\.50:80\/TCP /,
    },
    {
      name: 'a NodePort names its node port',
      objects: [
        aService({
          spec: {
            type: 'NodePort',
            ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }],
          },
        }),
      ],
      want: ['service-found:pass'],
      text: /^NodePort: ClusterIP 10\.96\.0\.50:80\/TCP, node port 30080 /,
    },
    {
      name: 'headless',
      objects: [aService({ spec: { clusterIP: 'None', clusterIPs: ['None'] } })],
      want: ['service-headless:pass'],
      text: /headless/,
    },
    {
      name: 'ExternalName',
      objects: [
        aService({
          spec: {
            type: 'ExternalName',
            externalName: 'db.example.com',
            clusterIP: undefined,
            clusterIPs: undefined,
            selector: undefined,
          },
        }),
      ],
      want: ['service-external-name:pass'],
      text: /an alias for db\.example\.com.*CNAME to db\.example\.com/,
    },
    {
      name: 'ExternalName holding an IP',
      objects: [
        aService({
          spec: {
            type: 'ExternalName',
            externalName: '203.0.113.7',
            clusterIP: undefined,
            clusterIPs: undefined,
            selector: undefined,
          },
        }),
      ],
      want: ['external-name-is-ip:fail'],
      text: /is an IP address/,
    },
    {
      name: 'missing, a close name exists',
      objects: [aService({ name: 'wbe' })],
      want: ['service-not-found:fail'],
      text: /Did you mean "wbe"\?/,
    },
    {
      name: 'missing, same name elsewhere',
      objects: [aService({ namespace: 'prod' })],
      want: ['service-not-found:fail'],
      text: /"web" in namespace prod/,
    },
    {
      name: 'missing, nothing alike',
      objects: [aService({ name: 'database' })],
      want: ['service-not-found:fail'],
      text: /no Service with a similar name/,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const found = run(serviceCheck, listedWhole(facts(c.objects)));
      assert.deepEqual(ids(found), c.want);
      if (c.text) assert.match(`${found[0]!.title} ${found[0]!.explanation}`, c.text);
    });

  // before: "Service default/web does not exist", exit 1, from a capture of another Service
  it('a Service missing from facts that list no namespace whole was not captured, not missing', () => {
    const one = facts([aService({ name: 'wbe' })]);
    one.meta = {
      ...one.meta,
      namespace: 'default',
      service: 'wbe',
      capturedAt: '2026-01-01T00:00:00Z',
    };
    const [f] = run(serviceCheck, one);
    assert.deepEqual(ids([f!]), ['service-not-captured:skip']);
    assert.match(
      f!.explanation,
      /was taken for default\/wbe .*whether default\/web exists is not known/,
    );
    assert.deepEqual(
      f!.evidence.map((e) => e.kind),
      ['not-observed'],
    );
    // `--all -n default` lists default whole: there it is missing
    const ns = { ...one, meta: { ...one.meta, service: undefined } };
    assert.deepEqual(ids(run(serviceCheck, ns)), ['service-not-found:fail']);
    const other = { ...one, meta: { ...ns.meta, namespace: 'prod' } };
    assert.match(
      run(serviceCheck, other)[0]!.explanation,
      /lists the Services of namespace prod only/,
    );
  });

  it('points the next command at the best suggestion', () => {
    const [f] = run(serviceCheck, facts([aService({ namespace: 'prod' })]));
    assert.equal(line(f!.next), 'kdebug svc web -n prod');
  });

  it('takes the live API suggestions when the Service was not read', () => {
    const [f] = run(serviceCheck, facts([]), {
      suggestions: [{ namespace: 'shop', name: 'web-svc' }],
    });
    assert.match(f!.explanation, /"web-svc" in namespace shop/);
  });

  it('is pending while the objects are still being read', () => {
    assert.deepEqual(ids(run(serviceCheck, facts([]), { collecting: { objects: true } })), [
      'pending:pending',
    ]);
  });

  it('ranks suggestions: exact name elsewhere, then the namespace, then spelling', () => {
    const services = [
      { namespace: 'default', name: 'wbe' },
      { namespace: 'other', name: 'web' },
      { namespace: 'other', name: 'webb' },
      { namespace: 'default', name: 'unrelated' },
    ];
    assert.deepEqual(similarServices(services, TARGET.namespace, 'web'), [
      { namespace: 'other', name: 'web' },
      { namespace: 'other', name: 'webb' },
      { namespace: 'default', name: 'wbe' },
    ]);
  });
});
