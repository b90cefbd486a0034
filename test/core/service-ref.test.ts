import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Service } from '../../src/core/kube.js';
import { parseServiceAddress, parseServiceRef, serviceAt } from '../../src/core/service-ref.js';

describe('the forms people type for a Service', () => {
  const cases: { typed: string; ref: ReturnType<typeof parseServiceRef> }[] = [
    { typed: 'web', ref: { name: 'web' } },
    { typed: 'shop/web', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'svc/web', ref: { name: 'web' } },
    { typed: 'service/web', ref: { name: 'web' } },
    { typed: 'services/web', ref: { name: 'web' } },
    { typed: 'web.shop', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'web.shop.svc', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'web.shop.svc.cluster.local', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'web.shop.svc.corp.example', ref: { namespace: 'shop', name: 'web' } },
    { typed: 'svc', ref: { name: 'svc' } },
    { typed: 'a/b/c', ref: { error: '"a/b/c" is not NAME, NS/NAME or svc/NAME' } },
    {
      typed: 'web.shop.pod',
      ref: { error: '"web.shop.pod" is not a Service\'s DNS name (NAME.NS.svc.cluster.local)' },
    },
    { typed: 'shop/', ref: { error: '"shop/" names no Service' } },
  ];
  for (const c of cases) it(c.typed, () => assert.deepEqual(parseServiceRef(c.typed), c.ref));
});

describe('an address as an application logs it names its Service', () => {
  const svc = (namespace: string, name: string, clusterIPs: string[], port = 80): Service =>
    ({ namespace, name, clusterIPs, ports: [{ port, protocol: 'TCP' }] }) as unknown as Service;
  const services = [
    svc('default', 'web', ['10.96.0.20', 'fd00:10:96::14']),
    svc('shop', 'cart', ['10.96.0.21'], 8080),
  ];

  it('reads IP, IP:PORT, [IPv6]:PORT and a bare IPv6 address; a name is no address', () => {
    assert.deepEqual(parseServiceAddress('10.96.0.20'), { ip: '10.96.0.20' });
    assert.deepEqual(parseServiceAddress('10.96.0.21:8080'), { ip: '10.96.0.21', port: 8080 });
    assert.deepEqual(parseServiceAddress('[fd00:10:96:0::14]:80'), {
      ip: 'fd00:10:96::14',
      port: 80,
    });
    assert.deepEqual(parseServiceAddress('fd00:10:96::14'), { ip: 'fd00:10:96::14' });
    for (const notOne of ['web', 'web:80', '10.96.0', '10.96.0.300', '10.96.0.20:0', 'cafe:80'])
      assert.equal(parseServiceAddress(notOne), undefined, notOne);
  });

  it('finds the one Service with that cluster IP, in any namespace; a port it lacks is said', () => {
    const at = (arg: string) => serviceAt(services, arg, parseServiceAddress(arg)!, 'snap');
    assert.deepEqual(at('10.96.0.21:8080'), { namespace: 'shop', name: 'cart' });
    assert.deepEqual(at('[fd00:10:96::14]:80'), { namespace: 'default', name: 'web' });
    assert.deepEqual(at('10.96.0.21:80'), {
      error: '10.96.0.21:80: Service shop/cart has no port 80 (ports: 8080/TCP)',
    });
    assert.deepEqual(at('10.96.9.9'), {
      error: '10.96.9.9: no Service in snap has cluster IP 10.96.9.9',
    });
  });
});
