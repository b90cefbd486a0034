// `cilium-dbg shell -- db/show frontends|backends` cut inside a row: Cilium fills a frontend's
// Status and a backend's Instances (and State) in every row, so a row with one of them empty is cut
// short. What of it is whole is read (a frontend's address and type, its backends not), said with
// its line, and its backends never compared; a backend row cut so is not read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';

const FRONTENDS =
  'Address                 Type        ServiceName            PortName   Backends                                   Status\n' +
  '10.1.0.1:443/TCP        ClusterIP   default/kubernetes     https      10.0.12.7:6443/TCP                         Done\n';

const BACKENDS =
  'Address              State    Instances\n' +
  '10.0.12.7:6443/TCP   active   default/kubernetes (https)\n';

describe('db/show frontends and backends cut inside their last row', () => {
  const cases: [string, string][] = [
    [
      'padded to the Backends column, no newline',
      '10.1.190.219:8080/TCP   ClusterIP   default/nginx-svc      http       ',
    ],
    [
      'padded, a newline after it',
      '10.1.190.219:8080/TCP   ClusterIP   default/nginx-svc      http       \n',
    ],
    [
      'inside the Backends cell',
      '10.1.190.219:8080/TCP   ClusterIP   default/nginx-svc      http       10.244.0.3:80/TCP, 10.2',
    ],
  ];
  for (const [name, row] of cases)
    it(`frontends, ${name}: the frontend is read, its backends unread, the cut said at its line`, () => {
      const t = parseCilium(FRONTENDS + row, 'f.txt');
      const cut = t.frontends.find((f) => f.ip === '10.1.190.219')!;
      assert.equal(cut.backendsUnread, true);
      assert.deepEqual(cut.backends, []);
      assert.equal(cut.status, undefined);
      assert.equal(cut.service, 'default/nginx-svc');
      assert.equal(t.cut?.[0]?.line, 3);
      assert.match(t.cut?.[0]?.reason ?? '', /its Status column is empty/);
    });

  it('frontends: a row cut inside its Type cell is not read', () => {
    const t = parseCilium(`${FRONTENDS}10.1.190.219:8080/TCP   Cluste`, 'f.txt');
    assert.deepEqual(
      t.frontends.map((f) => f.ip),
      ['10.1.0.1'],
    );
    assert.match(t.cut?.[0]?.reason ?? '', /not read/);
  });

  it('frontends: a row without its Status column in the middle is not read as a whole row', () => {
    const t = parseCilium(
      `${FRONTENDS}10.1.190.219:8080/TCP   ClusterIP   default/nginx-svc      http       \n${FRONTENDS.split('\n')[1]!.replace('10.1.0.1:', '10.1.0.2:')}\n`,
      'f.txt',
    );
    assert.equal(t.frontends.length, 3);
    assert.equal(t.frontends[1]!.backendsUnread, true);
    assert.equal(t.frontends[2]!.backendsUnread, undefined);
  });

  it('backends: a row cut before its Instances is not read, said at its line', () => {
    const t = parseCilium(`${BACKENDS}10.244.0.3:80/TCP    active`, 'b.txt');
    assert.deepEqual([...(t.backendStates?.keys() ?? [])], ['10.0.12.7:6443/TCP']);
    assert.equal(t.cut?.[0]?.line, 3);
  });
});
