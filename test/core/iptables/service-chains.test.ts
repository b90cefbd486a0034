// One Service's answer keeps, of the Services' entry chains, its own rules and those of no
// Service: another Service's rule cannot take its packets, and on a large cluster those are
// most of the bytes a node gives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keepServiceRules } from '../../../src/core/dataplane/iptables/service-chains.js';
import { clusterView } from '../../../src/core/kube/objects.js';
import { aService } from '../checks/builders.js';

const svc = clusterView([
  aService({
    name: 'web',
    spec: {
      clusterIP: '10.96.0.50',
      clusterIPs: ['10.96.0.50'],
      type: 'NodePort',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 }],
    },
  }),
]).services[0]!;

const SERVICES = [
  '-N KUBE-SERVICES',
  '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/kubernetes:https cluster IP" -m tcp --dport 443 -j KUBE-SVC-NPX46M4PTMTKRN6Y',
  '-A KUBE-SERVICES -d 10.96.0.50/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-ABCDEFGHIJKLMNOP',
  '-A KUBE-SERVICES -d 10.96.0.9/32 -p tcp -m comment --comment "other/db cluster IP" -m tcp --dport 5432 -j KUBE-SVC-QRSTUVWXYZ234567',
  '-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "other/cache cluster IP" -m tcp --dport 6379 -j KUBE-SVC-QRSTUVWXYZ23456A',
  '-A KUBE-SERVICES -d 10.96.0.0/12 -j DROP',
  '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
].join('\n');

const NODEPORTS = [
  '-N KUBE-NODEPORTS',
  '-A KUBE-NODEPORTS -p tcp -m comment --comment "default/web:http" -m tcp --dport 30080 -j KUBE-EXT-ABCDEFGHIJKLMNOP',
  '-A KUBE-NODEPORTS -p tcp -m comment --comment "other/db" -m tcp --dport 30432 -j KUBE-EXT-QRSTUVWXYZ234567',
  '-A KUBE-NODEPORTS -p tcp -m comment --comment "other/cache" -m tcp --dport 30379 -j KUBE-EXT-QRSTUVWXYZ23456A',
  // another Service's node port that is this one's port: an external IP on a node address
  '-A KUBE-NODEPORTS -p tcp -m comment --comment "other/eighty" -m tcp --dport 80 -j KUBE-EXT-QRSTUVWXYZ23456B',
].join('\n');

describe("keepServiceRules: the entry chains, one Service's", () => {
  it("drops the other Services' rules but one of each kind, keeps its own and every rule of no Service, in order", () => {
    const { text, dropped } = keepServiceRules(SERVICES, svc);
    const lines = SERVICES.split('\n');
    assert.equal(dropped, 2);
    assert.deepEqual(text.split('\n'), [
      '-N KUBE-SERVICES',
      lines[1], // the first of its kind (-j KUBE-SVC-...): the sign of kube-proxy's mode
      lines[2],
      '-A KUBE-SERVICES -d 10.96.0.0/12 -j DROP',
      lines[6],
    ]);
  });

  it('keeps its node port and any rule on its port, drops the others but one', () => {
    const { text, dropped } = keepServiceRules(NODEPORTS, svc);
    assert.equal(dropped, 1);
    assert.doesNotMatch(text, /30379/);
    assert.match(text, /--dport 30080 /);
    assert.match(text, /--dport 80 /);
  });
});
