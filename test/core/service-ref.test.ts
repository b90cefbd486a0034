import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Service } from '../../src/core/kube/objects.js';
import {
  parseServiceAddress,
  parseServiceRef,
  portsNamed,
  serviceAt,
  findService,
} from '../../src/core/kube/service-ref.js';

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
    { typed: 'web:8080', ref: { name: 'web', port: '8080' } },
    { typed: 'shop/web:http', ref: { namespace: 'shop', name: 'web', port: 'http' } },
    { typed: 'web.shop.svc.cluster.local:80', ref: { namespace: 'shop', name: 'web', port: '80' } },
    { typed: 'web:dns-tcp', ref: { name: 'web', port: 'dns-tcp' } },
    // a port's name has a letter, lower case, no dash at either end, at most 15 characters
    ...[
      'web:HTTP',
      'web:-x',
      'web:x-',
      'web:',
      'web:1:2',
      'web:a234567890123456',
      'web:123456',
    ].map((typed) => ({
      typed,
      ref: {
        error: `"${typed}" is not NAME:PORT (a port number or a port's name after the colon)`,
      },
    })),
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

  it('reads IP, IP:PORT, IP:PORTNAME, [IPv6]:PORT and a bare IPv6 address; a name is no address', () => {
    assert.deepEqual(parseServiceAddress('10.96.0.20'), { ip: '10.96.0.20' });
    assert.deepEqual(parseServiceAddress('10.96.0.21:8080'), { ip: '10.96.0.21', port: '8080' });
    assert.deepEqual(parseServiceAddress('10.96.0.21:http'), { ip: '10.96.0.21', port: 'http' });
    assert.deepEqual(parseServiceAddress('[fd00:10:96:0::14]:80'), {
      ip: 'fd00:10:96::14',
      port: '80',
    });
    assert.deepEqual(parseServiceAddress('[fd00:10:96::14]:dns-tcp'), {
      ip: 'fd00:10:96::14',
      port: 'dns-tcp',
    });
    assert.deepEqual(parseServiceAddress('fd00:10:96::14'), { ip: 'fd00:10:96::14' });
    const notOnes = ['web', 'web:80', '10.96.0', '10.96.0.300', '10.96.0.20:', '10.96.0.20:a_b'];
    for (const notOne of [...notOnes, 'cafe:80'])
      assert.equal(parseServiceAddress(notOne), undefined, notOne);
  });

  it('finds the one Service with that cluster IP, in any namespace; the port is left to step 1', () => {
    const at = (arg: string) => serviceAt(services, arg, parseServiceAddress(arg)!, 'snap');
    assert.deepEqual(at('10.96.0.21:8080'), { namespace: 'shop', name: 'cart', port: '8080' });
    assert.deepEqual(at('[fd00:10:96::14]:80'), { namespace: 'default', name: 'web', port: '80' });
    // as NAME:PORT: a port it lacks is the Service step's to fail, with the ports it has
    assert.deepEqual(at('10.96.0.21:80'), { namespace: 'shop', name: 'cart', port: '80' });
    assert.deepEqual(at('10.96.9.9'), {
      error: '10.96.9.9: no Service in snap has cluster IP 10.96.9.9',
    });
  });
});

describe('what :svc ARG names among the Services listed', () => {
  const svc = (namespace: string, name: string, ip: string): Service =>
    ({
      namespace,
      name,
      clusterIPs: [ip],
      ports: [{ port: 80, protocol: 'TCP' }],
    }) as unknown as Service;
  const services = [
    svc('default', 'web', '10.96.0.20'),
    svc('shop', 'web', '10.96.0.21'),
    svc('kube-system', 'kube-dns', '10.96.0.10'),
  ];
  const find = (arg: string, shown?: string) => findService(services, arg, shown, 'snap');
  it('a name in the namespace shown, else in the one namespace that has it', () => {
    assert.deepEqual(find('kube-dns'), { namespace: 'kube-system', name: 'kube-dns' });
    assert.deepEqual(find('kube-dns:53', 'default'), {
      namespace: 'kube-system',
      name: 'kube-dns',
      port: '53',
    });
    assert.deepEqual(find('web', 'shop'), { namespace: 'shop', name: 'web' });
  });
  it('a name several namespaces hold, or none, is the name and the namespaces holding it', () => {
    assert.deepEqual(find('web:http'), {
      error: 'Service web is in 2 namespaces (default, shop): give one with -n',
      namespaces: ['default', 'shop'],
      ref: { name: 'web', port: 'http' },
    });
    assert.deepEqual(find('nope'), {
      error: 'no Service named nope in any namespace of snap',
      namespaces: [],
      ref: { name: 'nope' },
    });
  });
  it('NS/NAME as typed, an address by its cluster IP, a bad argument said', () => {
    assert.deepEqual(find('shop/nope'), { namespace: 'shop', name: 'nope' });
    assert.deepEqual(find('10.96.0.21:80'), { namespace: 'shop', name: 'web', port: '80' });
    assert.deepEqual(find('10.96.9.9'), {
      error: '10.96.9.9: no Service in snap has cluster IP 10.96.9.9',
    });
    assert.deepEqual(find('a/b/c'), { error: '"a/b/c" is not NAME, NS/NAME or svc/NAME' });
  });
});

describe('NAME:PORT names the ports it narrows to', () => {
  const dns = {
    ports: [
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, protocol: 'TCP' },
      { name: 'metrics', port: 9153, protocol: 'TCP' },
    ],
  } as unknown as Service;
  it('by number every protocol of it, by name the one port, else none', () => {
    assert.deepEqual(
      portsNamed(dns, '53').map((p) => p.name),
      ['dns', 'dns-tcp'],
    );
    assert.deepEqual(
      portsNamed(dns, 'dns-tcp').map((p) => `${p.port}/${p.protocol}`),
      ['53/TCP'],
    );
    assert.deepEqual(portsNamed(dns, '54'), []);
    assert.deepEqual(portsNamed(dns, 'http'), []);
  });
});
