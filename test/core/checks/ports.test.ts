import assert from 'node:assert/strict';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import { describe, it } from 'node:test';
import { portsCheck } from '../../../src/core/checks/ports.js';
import { aPod, aService, anEndpointSlice, facts, ids, run, webPods } from './builders.js';

/** A next command as the person's terminal shows it. */
const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

const svcPort = (p: Record<string, unknown>) =>
  aService({ spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', ...p }] } });
const refused = (ip: string, port: number) =>
  `nc: connect to ${ip} port ${port} (tcp) failed: Connection refused\nkdebug-probe tcp-connect tool=nc exit=1\n`;

describe('ports step', () => {
  const cases: {
    name: string;
    port: Record<string, unknown>;
    pods?: ReturnType<typeof aPod>[];
    want: string[];
  }[] = [
    {
      name: 'numeric targetPort declared by every Pod',
      port: { targetPort: 8080 },
      want: ['target-port-ok:pass'],
    },
    {
      name: 'named targetPort found on every Pod',
      port: { targetPort: 'http' },
      want: ['target-port-ok:pass'],
    },
    {
      name: 'numeric targetPort no Pod declares',
      port: { targetPort: 9090 },
      want: ['target-port-not-exposed:fail'],
    },
    {
      name: 'named targetPort no Pod has',
      port: { targetPort: 'web' },
      want: ['target-port-not-exposed:fail'],
    },
    {
      name: 'one Pod of two lacks the port (mid-rollout)',
      port: { targetPort: 8080 },
      pods: [
        aPod({ name: 'web-1' }),
        aPod({ name: 'web-2', ip: '10.244.1.6', ports: [{ containerPort: 9000 }] }),
      ],
      want: ['target-port-not-exposed:warn'],
    },
    {
      name: 'Service TCP, Pods declare the port UDP',
      port: { targetPort: 8080 },
      pods: webPods({ ports: [{ containerPort: 8080, protocol: 'UDP' }] }),
      want: ['port-protocol-mismatch:fail'],
    },
    {
      name: 'Pods declare no ports at all: cannot tell',
      port: { targetPort: 8080 },
      pods: webPods({ ports: [] }),
      want: ['target-port-undeclared:skip'],
    },
    {
      name: 'a number written as a string',
      port: { targetPort: '8080' },
      want: ['target-port-string:warn', 'target-port-ok:pass'],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      assert.deepEqual(
        ids(run(portsCheck, facts([svcPort(c.port), ...(c.pods ?? webPods())]))),
        c.want,
      );
    });

  it('proposes the one port the Pods declare, as a patch', () => {
    const [f] = run(portsCheck, facts([svcPort({ targetPort: 9090 }), ...webPods()]));
    assert.match(f!.explanation, /they declare 8080/);
    assert.equal(
      line(f!.next),
      `kubectl -n default patch service web --type=json -p '[{"op":"replace","path":"/spec/ports/0/targetPort","value":8080}]'`,
    );
  });

  it('adds the recorded refusals of the endpoints as evidence', () => {
    const objects = [svcPort({ targetPort: 9090 }), anEndpointSlice({ port: 9090 }), ...webPods()];
    const [f] = run(
      portsCheck,
      facts(objects, { 'node-a': { 'tcp-connect_10.244.0.5_9090': refused('10.244.0.5', 9090) } }),
    );
    assert.ok(
      f!.evidence
        .map(evidenceText)
        .includes('node-a: TCP connect 10.244.0.5:9090: connection refused'),
      f!.evidence.map(evidenceText).join('\n'),
    );
  });

  it('compares a selector-less Service with its hand-made EndpointSlice ports', () => {
    const svc = aService({ spec: { selector: undefined } });
    assert.deepEqual(ids(run(portsCheck, facts([svc, anEndpointSlice()]))), [
      'target-port-manual:skip',
    ]);
    assert.deepEqual(ids(run(portsCheck, facts([svc, anEndpointSlice({ portName: 'web' })]))), [
      'target-port-not-exposed:fail',
    ]);
  });

  it('skips when the selector matches nothing, and is pending while Pods are read', () => {
    const other = aPod({ name: 'db-1', labels: { app: 'db' } });
    assert.deepEqual(ids(run(portsCheck, facts([aService(), other]))), ['ports-no-pods:skip']);
    // no Pod captured at all: not "none selected", but not seen
    assert.deepEqual(ids(run(portsCheck, facts([aService()]))), ['pods-not-observed:skip']);
    assert.deepEqual(ids(run(portsCheck, facts([aService()]), { collecting: { objects: true } })), [
      'pending:pending',
    ]);
  });
});
