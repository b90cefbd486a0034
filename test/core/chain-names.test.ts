import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  endpointChain,
  hash16,
  kubeProxyChain,
} from '../../src/core/dataplane/kube-proxy/chain-names.js';

describe('kube-proxy chain names', () => {
  // pairs read from real dumps (the demo cluster's dumps) and kube-proxy's own tests
  const services: [Parameters<typeof kubeProxyChain>, string][] = [
    [['KUBE-SVC', 'default/nginx-svc:http', 'tcp'], 'KUBE-SVC-ELCM5PCEQWBTUJ2I'],
    [['KUBE-SVC', 'default/kubernetes:https', 'tcp'], 'KUBE-SVC-NPX46M4PTMTKRN6Y'],
    [['KUBE-SVC', 'kube-system/kube-dns:dns', 'udp'], 'KUBE-SVC-TCOU7JCQXEZGVUNU'],
    [['KUBE-SVC', 'kube-system/kube-dns:dns-tcp', 'tcp'], 'KUBE-SVC-ERIFXISQEP7F7OF4'],
    [['KUBE-SVC', 'ns1/svc1:p80', 'tcp'], 'KUBE-SVC-XPGD46QRK7WJZT7O'],
    [['KUBE-SVC', 'ns1/svc1', 'tcp'], 'KUBE-SVC-AQI2S6QIMU7PVVRP'],
    [['KUBE-SVC', 'ns1/svc1', 'TCP'], 'KUBE-SVC-AQI2S6QIMU7PVVRP'],
    [['KUBE-SVL', 'ns1/svc1:p80', 'tcp'], 'KUBE-SVL-XPGD46QRK7WJZT7O'],
    [['KUBE-EXT', 'ns1/svc1:p80', 'tcp'], 'KUBE-EXT-XPGD46QRK7WJZT7O'],
    [['KUBE-FW', 'ns1/svc1:p80', 'tcp'], 'KUBE-FW-XPGD46QRK7WJZT7O'],
  ];
  for (const [args, want] of services)
    it(`${args.join(' ')} -> ${want}`, () => assert.equal(kubeProxyChain(...args), want));

  it('names endpoint chains from the Service port and the endpoint', () => {
    assert.equal(
      endpointChain('default/nginx-svc:http', 'tcp', '10.244.0.3:80'),
      'KUBE-SEP-SMDVMBZNJPO5AA7R',
    );
    assert.equal(
      endpointChain('default/nginx-svc:http', 'tcp', '10.244.1.7:80'),
      'KUBE-SEP-FNO4E6JYD7EGUHTP',
    );
  });

  it('uses 16 characters of the base32 alphabet', () => {
    for (const s of ['', 'a', 'ns/name:port', 'x'.repeat(500)])
      assert.match(hash16(s), /^[A-Z2-7]{16}$/);
  });
});
