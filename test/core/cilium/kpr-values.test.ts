// cilium-config's kube-proxy-replacement as each Cilium release reads it (from its source in the
// Go module: daemon/cmd/kube_proxy_replacement.go's initKubeProxyReplacementOptions at v1.13.18,
// v1.14.19, v1.16.19 and v1.17.0, whose error newDaemon returns, so the agent exits; v1.18.6's
// pkg/kpr NewKPRConfig; v1.19.7's pkg/kpr, a boolean option that hive decodes with
// strconv.ParseBool): a value the release refuses stops the agent, said so, never read as true or
// false; a value it takes is read as it reads it, exactly as written.
//
// IP conventions: the builders' cluster (node-a, node-b; web 10.96.0.50).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { knows } from '../../../src/core/dataplane/cilium/agent/agent.js';
import { aCiliumAgent } from '../../support/builders.js';
import { ciliumCluster, facts, replace } from '../checks/builders.js';
import type { KubeObject } from '../../../src/core/model.js';
import { allModes } from '../../support/modes.js';

/** node-a's analysis: agents of Cilium `release`, not ready (the builder's), no status answered,
 * cilium-config's kube-proxy-replacement `value`. */
function nodeA(release: string, value: string, ready = false) {
  const agent = (node: string): KubeObject => {
    const pod = aCiliumAgent(node, `quay.io/cilium/cilium:v${release}`);
    if (!ready) return pod;
    const status = pod['status'] as Record<string, unknown>;
    return {
      ...pod,
      status: {
        ...status,
        containerStatuses: [{ name: 'cilium-agent', ready: true, state: { running: {} } }],
      },
    };
  };
  const objects = ['node-a', 'node-b'].reduce(
    (o, n) => replace(o, 'Pod', `cilium-${n}`, agent(n)),
    ciliumCluster({ 'kube-proxy-replacement': value }),
  );
  return new Analysis(facts(objects), { code: allModes });
}

describe('kube-proxy-replacement values a release refuses: the agent does not start', () => {
  // before: 1.16's "strict" was read as a full replacement, the agent's table merely not read
  it('Cilium 1.16 refuses "strict" (removed after 1.15): said, with what it takes', () => {
    const a = nodeA('1.16.19', 'strict');
    const said = a.node('node-a').agentNotStarted() ?? '';
    assert.match(
      said,
      /cilium-config sets kube-proxy-replacement to "strict", which Cilium 1\.16 refuses \(it takes "true" or "false" only\): the agent does not start \("Invalid value for --kube-proxy-replacement"\)/,
    );
    assert.equal(knows(a.state('node-a').cilium!.settings, 'kubeProxyReplacement'), false);
  });

  it('Cilium 1.18 refuses "partial": its kpr config fails', () => {
    const said = nodeA('1.18.6', 'partial').node('node-a').agentNotStarted() ?? '';
    assert.match(said, /"partial", which Cilium 1\.18 refuses .*kpr\.NewKPRConfig/);
  });

  // before: 1.19's "partial" was read as no replacement
  it('Cilium 1.19 refuses what is no boolean; a value not its own is not repeated', () => {
    const said = nodeA('1.19.7', 'partial').node('node-a').agentNotStarted() ?? '';
    assert.match(said, /"partial", which Cilium 1\.19 refuses \(it takes a boolean\)/);
    const other = nodeA('1.19.7', 'yes please').node('node-a').agentNotStarted() ?? '';
    assert.match(other, /kube-proxy-replacement to a value it does not know, which Cilium 1\.19/);
    assert.ok(!other.includes('yes please'), other);
  });

  it('Cilium 1.13 refuses "true" (it takes strict, partial, disabled)', () => {
    const said = nodeA('1.13.18', 'true').node('node-a').agentNotStarted() ?? '';
    assert.match(said, /it takes "strict", "partial" or "disabled" only/);
  });

  // before: replaced kube-proxy silently on the config's word
  it('an agent ready with a value its release refuses: the replacement not known, none refused', () => {
    const a = nodeA('1.16.19', 'strict', true);
    const agent = a.state('node-a').cilium!;
    assert.equal(agent.refused, undefined);
    assert.equal(knows(agent.settings, 'kubeProxyReplacement'), false);
    assert.match(a.state('node-a').mode.evidence.text, /kube-proxy replacement not known/);
  });
});

describe('kube-proxy-replacement values a release takes, read as it reads them', () => {
  it('1.15 still takes "strict" (deprecated): a full replacement, nothing refused', () => {
    const agent = nodeA('1.15.19', 'strict').state('node-a').cilium!;
    assert.equal(agent.refused, undefined);
    assert.equal(agent.replacesKubeProxy, true);
  });

  // before: "True" was no replacement
  it('1.19 reads "True" and "1" as true (strconv.ParseBool), "F" as false', () => {
    for (const v of ['True', '1'])
      assert.equal(nodeA('1.19.7', v).state('node-a').cilium!.replacesKubeProxy, true, v);
    const off = nodeA('1.19.7', 'F').state('node-a').cilium!;
    assert.equal(off.replacesKubeProxy, false);
    assert.equal(off.refused, undefined);
  });

  it('1.16 takes "True" for no value of its own: refused, exactly as written', () => {
    assert.match(
      nodeA('1.16.19', 'True').node('node-a').agentNotStarted() ?? '',
      /a value it does not know/,
    );
  });
});
