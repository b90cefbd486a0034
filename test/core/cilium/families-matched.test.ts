// A Cilium agent's one table holds both families' frontends: a match of it rules out only the
// families the agent serves. With IPv6 off, Reachability must not learn that the IPv6 ClusterIP's
// rules were as expected on that node.
//
// IP conventions: web is dual-stack (10.96.0.50, fd00:96::50), its Pods 10.244.0.5 and
// 10.244.1.6; kube-dns 10.96.0.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CheckContext } from '../../../src/core/checks/context.js';
import { runStep } from '../../../src/core/diagnose.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { aService, ciliumCluster, facts, replace, TARGET } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

const BACKENDS = '10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP';
const LISTING = [
  'Address            Type       ServiceName  PortName  Backends                                  Status',
  `10.96.0.50:80/TCP  ClusterIP  default/web  http      ${BACKENDS}  Done`,
  '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns  10.244.0.2:53/UDP  Done',
  '',
].join('\n');
const DUAL = aService({
  spec: {
    clusterIPs: ['10.96.0.50', 'fd00:96::50'],
    ipFamilies: ['IPv4', 'IPv6'],
    ipFamilyPolicy: 'RequireDualStack',
  },
});

/** What the Rules step hands later steps for node-b, its agent's IPv6 `ipv6`. */
function matchedOnB(ipv6: boolean) {
  const objects = replace(
    ciliumCluster({ 'kube-proxy-replacement': 'true', 'enable-ipv6': String(ipv6) }),
    'Service',
    'web',
    DUAL,
  );
  const ctx = new CheckContext(
    facts(objects, { 'node-b': { 'cilium-frontends': LISTING } }),
    TARGET,
    { code: allModes },
  );
  const findings = runStep(rulesCheck, ctx).findings;
  return { matched: ctx.rulesMatched.filter((m) => m.node === 'node-b'), findings };
}

describe("the Rules step's matches on a Cilium node, by the families its agent serves", () => {
  it('IPv6 off: the IPv4 ClusterIP matched, the IPv6 one not said to be', () => {
    const { matched, findings } = matchedOnB(false);
    assert.ok(findings.some((f) => f.id === 'rules-match' && f.status === 'pass'));
    assert.deepEqual(
      matched.map((m) => `${m.family} ${m.clusterIP}`),
      ['IPv4 10.96.0.50'],
    );
  });
  it('IPv6 on and its frontend not listed: no match at all', () =>
    assert.deepEqual(matchedOnB(true).matched, []));
});
