// A ServicePortName ("ns/name:port", kube-proxy's ServicePortName.String()) read into its parts by
// model.ts alone: the Service it is of, and its port name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPortOf, portNameOf, serviceNameOf, serviceRefOf } from '../../src/core/model.js';

describe('a ServicePortName read into its parts', () => {
  it('names its Service and its port, a port unnamed as "" whether written "ns/name" or "ns/name:"', () => {
    assert.deepEqual(serviceRefOf('default/web:http'), { namespace: 'default', name: 'web' });
    for (const [spn, port] of [
      ['default/web:http', 'http'],
      ['default/web', ''],
      ['default/web:', ''],
    ] as const) {
      assert.equal(serviceNameOf(spn), 'default/web', spn);
      assert.equal(portNameOf(spn), port, spn);
    }
  });

  it("says a port is one of a Service's by its whole name, never by a prefix of it", () => {
    assert.ok(isPortOf('default/web:http', 'default/web'));
    assert.ok(isPortOf('default/web', 'default/web'));
    assert.ok(!isPortOf('default/web2:http', 'default/web'));
    assert.ok(!isPortOf('default/web:http', 'default/we'));
    assert.ok(!isPortOf(undefined, 'default/web'));
  });
});
