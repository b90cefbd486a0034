// A Cilium agent whose release refuses cilium-config as read (both acceleration keys set, to
// different values: every release stops at start), not ready, without a status. With nothing of
// it listed it has not started: drift, trace and the Rules step say so and compare or walk
// nothing. With its listing read it ran, on an earlier configuration: that listing is compared
// and walked as usual, and the refusal is said beside.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { analyze } from '../../../src/tui/data.js';
import { DriftInputError } from '../../../src/core/dataplane/drift.js';
import type { KubeObject } from '../../../src/core/model.js';
import { ciliumCluster, facts, ids, run } from '../checks/builders.js';
import { unavailableText } from '../../../src/core/nodes/drift-unavailable.js';
import type { NodeAnalysis } from '../../../src/core/nodes/node-analysis.js';
import { allModes } from '../../support/modes.js';

/** Why drift refuses the node, as drift says it; '' where it does not. */
function driftRefusal(node: NodeAnalysis): string {
  const why = node.driftUnavailable();
  return why ? unavailableText(node.name, why) : '';
}

const ACCELERATION = { 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };
// running but not ready (the builder's agents are), and no status answered
const objects = (config: Record<string, string> = ACCELERATION): KubeObject[] =>
  ciliumCluster(config);
// node-b's agent listed the Services as the objects make them: web and kube-dns
const FRONTENDS = [
  'Address            Type       ServiceName          PortName  Backends                                  Status',
  '10.96.0.10:53/UDP  ClusterIP  kube-system/kube-dns  dns       10.244.0.2:53/UDP                        Done',
  '10.96.0.50:80/TCP  ClusterIP  default/web           http      10.244.0.5:8080/TCP, 10.244.1.6:8080/TCP  Done',
  '',
].join('\n');
const cluster = (config?: Record<string, string>) =>
  facts(objects(config), { 'node-b': { 'cilium-frontends': FRONTENDS } });
const WHY = /cilium-config sets both bpf-lb-acceleration and node-port-acceleration/;

describe('an agent that does not start with its configuration, nothing of it listed', () => {
  const node = new Analysis(cluster(), { code: allModes }).node('node-a');

  it('drift and trace say it does not start and why, and compare and walk nothing', () => {
    const said = node.agentNotStarted() ?? '';
    assert.match(said, /^Cilium's agent kube-system\/cilium-node-a does not start with its/);
    assert.match(said, /programs no Service there/);
    assert.match(said, WHY);
    // before: "Cilium replaces kube-proxy and its agent's Service table (...) was not read"
    assert.equal(driftRefusal(node), `node node-a: ${said}`);
    assert.throws(() => node.drift(), DriftInputError);
    assert.equal(node.dataplane(), undefined);
  });

  it('the Rules step says it, with the reason, instead of a table not read', () => {
    const found = run(rulesCheck, cluster()).filter((f) => f.node === 'node-a');
    // before: rules-cilium-not-observed:skip
    assert.deepEqual(ids(found), ['cilium-config-refused:warn']);
    assert.match(found[0]!.title, /node-a: Cilium's agent does not start with its configuration/);
    assert.match(found[0]!.explanation, WHY);
    assert.deepEqual(
      found[0]!.evidence.map((e) => [e.kind, e.text]),
      [
        ['read', 'Pod kube-system/cilium-node-a: container cilium-agent not ready (running)'],
        ['read', 'ConfigMap kube-system/cilium-config, as Cilium v1.18.6 reads it'],
      ],
    );
  });

  it('an agent whose release takes the configuration is a table not read, as before', () => {
    const found = run(rulesCheck, cluster({})).filter((f) => f.node === 'node-a');
    assert.deepEqual(ids(found), ['rules-cilium-not-observed:skip']);
    assert.equal(
      new Analysis(cluster({}), { code: allModes }).node('node-a').agentNotStarted(),
      undefined,
    );
  });
});

describe('an agent that does not start with its configuration, its listing read', () => {
  const node = new Analysis(cluster(), { code: allModes }).node('node-b');

  it('drift compares the listing as usual and notes the refusal', () => {
    const d = node.drift();
    assert.equal(node.agentNotStarted(), undefined);
    // before: nothing compared, servicePorts 0, a table-not-captured note "expects no table"
    assert.deepEqual(d.findings, []);
    assert.equal(d.servicePorts, 2);
    assert.deepEqual(
      d.notes?.map((n) => n.id),
      ['cilium-config-refused'],
    );
    assert.match(
      d.notes![0]!.explanation,
      /is not ready and would not start again .* read as usual/,
    );
    assert.match(d.notes![0]!.explanation, WHY);
    // before: no evidence, and `logs --tail=200` of the container running now
    assert.deepEqual(
      d.notes![0]!.evidence.map((e) => [e.kind, e.text]),
      [
        ['read', 'Pod kube-system/cilium-node-b: container cilium-agent not ready (running)'],
        ['read', 'ConfigMap kube-system/cilium-config, as Cilium v1.18.6 reads it'],
      ],
    );
    assert.deepEqual(d.notes![0]!.next?.argv, [
      'kubectl',
      '-n',
      'kube-system',
      'logs',
      'cilium-node-b',
      '-c',
      'cilium-agent',
      '--previous',
    ]);
  });

  it('trace walks the listing and says the refusal in a note', () => {
    const walked = node.trace({
      src: '10.244.1.6',
      dst: '10.96.0.50',
      dport: 80,
      protocol: 'tcp',
      fromHost: false,
    });
    assert.deepEqual(walked.outcomes.map((o) => o.destination).sort(), [
      '10.244.0.5:8080',
      '10.244.1.6:8080',
    ]);
    assert.match(walked.notes.at(-1) ?? '', WHY);
  });

  it('the Rules step compares it (a match) and warns beside it', () => {
    const found = run(rulesCheck, cluster()).filter((f) => f.node === 'node-b');
    // before: rules-match:pass alone, from comparing nothing
    // (its BPF maps not read: that part is not observed)
    assert.deepEqual(ids(found).sort(), [
      'cilium-config-refused:warn',
      'rules-cilium-not-observed:skip',
      'rules-match:pass',
    ]);
    const refused = found.find((f) => f.id === 'cilium-config-refused')!;
    assert.match(refused.title, /cilium-config as read would stop the agent's next start/);
  });
});

describe("an agent's readiness: its own container's status, else its Pod's Ready condition", () => {
  /** node-a's agent with `status` (node-b's listed, as above). */
  const withStatus = (status: Record<string, unknown>) =>
    facts(
      objects().map((o) =>
        o.metadata?.name === 'cilium-node-a'
          ? { ...o, status: { phase: 'Running', ...status } }
          : o,
      ),
      { 'node-b': { 'cilium-frontends': FRONTENDS } },
    );
  const agentOn = (f: ReturnType<typeof withStatus>) =>
    new Analysis(f, { code: allModes }).state('node-a').cilium!;

  it('no container status but Ready True: started, nothing said refused', () => {
    // before: refused, with evidence "container cilium-agent not ready" nobody read
    const f = withStatus({ conditions: [{ type: 'Ready', status: 'True' }] });
    assert.equal(agentOn(f).refused, undefined);
    const found = run(rulesCheck, f).filter((x) => x.node === 'node-a');
    assert.deepEqual(ids(found), ['rules-cilium-not-observed:skip']);
  });

  it("another container ready is not the agent's: Ready False says it, as read", () => {
    const f = withStatus({
      containerStatuses: [{ name: 'sidecar', ready: true, state: { running: {} } }],
      conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
    });
    // before: the sidecar's ready made it started, so nothing was said
    assert.match(
      new Analysis(f, { code: allModes }).node('node-a').agentNotStarted() ?? '',
      /does not start/,
    );
    const found = run(rulesCheck, f).filter((x) => x.node === 'node-a');
    assert.deepEqual(ids(found), ['cilium-config-refused:warn']);
    assert.deepEqual(
      found[0]!.evidence.map((e) => [e.kind, e.text]),
      [
        ['read', 'Pod kube-system/cilium-node-a: condition Ready False (ContainersNotReady)'],
        ['read', 'ConfigMap kube-system/cilium-config, as Cilium v1.18.6 reads it'],
      ],
    );
  });

  it('neither read: not said refused, only that a start would stop, and no line not read', () => {
    const f = withStatus({});
    const node = new Analysis(f, { code: allModes }).node('node-a');
    // before: "does not start with its configuration", for drift, trace and the TUI too
    assert.equal(node.agentNotStarted(), undefined);
    assert.equal(node.driftUnavailable()?.kind, 'cilium-not-read');
    assert.match(
      driftRefusal(node),
      /^node node-a: Cilium replaces kube-proxy and its agent's Service table .* was not read; cilium-config as read would stop .* at a start; whether it started is not known/,
    );
    const found = run(rulesCheck, f).filter((x) => x.node === 'node-a');
    // the table not read is said, and the refusal beside it
    assert.deepEqual(ids(found), ['rules-cilium-not-observed:skip', 'cilium-config-refused:warn']);
    const refused = found[1]!;
    assert.match(refused.title, /cilium-config as read would stop the agent at a start/);
    assert.doesNotMatch(refused.explanation, /does not start|not ready/);
    // before: ['read', 'Pod ...: container cilium-agent not ready']
    assert.deepEqual(
      refused.evidence.map((e) => [e.kind, e.text]),
      [
        [
          'not-observed',
          'Pod kube-system/cilium-node-a: no status of container cilium-agent and no Ready condition read',
        ],
        ['read', 'ConfigMap kube-system/cilium-config, as Cilium v1.18.6 reads it'],
      ],
    );
  });
});

describe('an agent that does not start, its listing recorded but not read (an error in its place)', () => {
  const ERROR =
    'Error: Get "http://localhost/v1/config": dial unix /var/run/cilium/cilium.sock: connect: no such file or directory\n';
  const f = facts(objects(), {
    'node-a': { 'cilium-frontends': ERROR },
    'node-b': { 'cilium-frontends': FRONTENDS },
  });

  it('the Rules step says it does not start beside the listing not read, not that it ran', () => {
    const found = run(rulesCheck, f).filter((x) => x.node === 'node-a');
    assert.deepEqual(ids(found), ['rules-unreadable:skip', 'cilium-config-refused:warn']);
    // before: "would stop the agent's next start ... the listing read shows it ran"
    assert.match(found[1]!.title, /Cilium's agent does not start with its configuration/);
    assert.doesNotMatch(found[1]!.explanation, /shows it ran/);
  });

  it('drift, trace and the TUI say it does not start, and the listing that did not read', () => {
    const node = new Analysis(f, { code: allModes }).node('node-a');
    // before: undefined (a listing file was there), so only the listing not read was said
    assert.match(node.agentNotStarted() ?? '', /does not start with its configuration/);
    assert.match(
      driftRefusal(node),
      /^node node-a: Cilium's agent kube-system\/cilium-node-a does not start .*; Cilium replaces kube-proxy and its agent's Service table was not read: /,
    );
    const tui = analyze({ facts: { objects: objects(), nodes: f.nodes, meta: {} }, code: allModes })
      .nodes[0]!;
    assert.match(tui.error ?? '', /^Cilium's agent kube-system\/cilium-node-a does not start .*; /);
  });
});

describe("an agent refusing cilium-config's bpf-lb-mode, its BPF maps read", () => {
  // 1.18 stops on node-port-mode set beside a bpf-lb-mode other than snat; the agent ran on an
  // earlier configuration (SNAT: no entry says dsr)
  const MODES = { 'bpf-lb-mode': 'dsr', 'node-port-mode': 'dsr' };
  const BPF = [
    'SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)',
    '10.96.0.10:53/UDP (0)   0.0.0.0:0 (1) (0) [ClusterIP, non-routable]',
    '10.96.0.10:53/UDP (1)   10.244.0.2:53/UDP (1) (1)',
    '10.96.0.50:80/TCP (0)   0.0.0.0:0 (2) (0) [ClusterIP, non-routable]',
    '10.96.0.50:80/TCP (1)   10.244.0.5:8080/TCP (2) (1)',
    '10.96.0.50:80/TCP (2)   10.244.1.6:8080/TCP (2) (2)',
    '',
  ].join('\n');
  const f = facts(objects(MODES), {
    'node-b': { 'cilium-frontends': FRONTENDS, 'cilium-bpf-lb-list': BPF },
  });

  it('compares no forwarding mode nor algorithm of the refused config, and says so', () => {
    const d = new Analysis(f, { code: allModes }).node('node-b').drift();
    // before: cilium-forwarding-differs on each entry, against the dsr the agent never ran with
    assert.deepEqual(d.findings, []);
    const said = d.notRead?.find((n) => n.title.startsWith('forwarding mode'));
    assert.equal(said?.id, 'table-not-captured');
    assert.match(said.explanation, /earlier configuration, whose bpf-lb-mode and bpf-lb-algorithm/);
  });
});
