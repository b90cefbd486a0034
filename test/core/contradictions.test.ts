// Findings never contradict each other: on every bundled snapshot, and on each of them with one
// node's rules or probes taken away, a step shown as a bare ✓ is not contradicted by another
// finding about what it speaks for (the endpoints' nodes, the family, the lookup, the probe), and
// no passing finding holds a part not observed or names a node where nothing was observed.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import { clusterView } from '../../src/core/kube/objects.js';
import { shownStepStatus, type Facts, type Finding, type Report } from '../../src/core/model.js';
import { dumps, facts, healthy, probeOut, TARGET } from './checks/builders.js';
import { allModes } from '../support/modes.js';

/** A step's bare ✓, and the findings (anywhere in the report) that say it cannot be one. */
const CONTRADICTS: { step: string; by: string[]; onEndpointNodes?: boolean }[] = [
  {
    // a Pod reaching itself is masqueraded only where its node's rules are there and right
    step: 'hairpin',
    by: [
      'ipset-entry-missing',
      'masquerade-missing',
      'endpoint-missing',
      'service-rules-missing',
      'service-chain-missing',
      'rules-not-observed',
      'rules-ipv6-not-observed',
      'rules-nftables-not-observed',
      'rules-ipvs-not-observed',
      'rules-not-read',
    ],
    onEndpointNodes: true,
  },
  // the rules match only where every node they speak for was read
  { step: 'rules', by: ['rules-not-observed', 'rules-not-read', 'rules-ipv6-not-observed'] },
  // DNS works only if a lookup was seen answering
  { step: 'dns', by: ['dns-lookup-not-recorded', 'dns-lookup-not-observed', 'dns-answer-wrong'] },
  // the Service answers only where it was probed
  { step: 'reachability', by: ['probes-not-recorded', 'probe-not-observed'] },
];

/** Steps whose pass says the Service's traffic is forwarded. */
const FORWARDING = ['traffic-policy', 'hairpin', 'reachability'];

function contradictions(r: Report, facts: Facts): string[] {
  const all = r.steps.flatMap((s) => s.findings.map((f) => ({ step: s.id, f })));
  // the nodes the Service's endpoints run on
  const endpointNodes = new Set(
    clusterView(facts.objects)
      .endpointSlices.filter((s) => s.serviceName === r.target.service)
      .flatMap((s) => s.endpoints.flatMap((e) => (e.nodeName ? [e.nodeName] : []))),
  );
  const out: string[] = [];
  for (const c of CONTRADICTS) {
    const step = r.steps.find((s) => s.id === c.step);
    if (!step || shownStepStatus(step) !== 'pass') continue;
    const against = all.filter(
      ({ f }: { f: Finding }) =>
        c.by.includes(f.id) &&
        (f.status === 'fail' || f.status === 'warn' || f.status === 'skip') &&
        (!c.onEndpointNodes || f.node === undefined || endpointNodes.has(f.node)),
    );
    for (const a of against) out.push(`${c.step} ✓ but ${a.step}: [${a.f.id}] ${a.f.title}`);
  }
  // and, whatever the ids: a pass holds no part that was not observed, and every node it names
  // has evidence observed on that node
  for (const { step, f } of all) {
    if (f.status !== 'pass' || f.info) continue;
    for (const e of f.evidence.filter((x) => x.kind === 'not-observed'))
      out.push(`${step} [${f.id}] passes with a part not observed: ${e.text}`);
    const named = [...(f.node ? [f.node] : []), ...(f.nodes ?? [])];
    for (const n of named)
      if (!f.evidence.some((e) => e.kind === 'observed' && e.node === n))
        out.push(`${step} [${f.id}] passes for ${n} with nothing observed there`);
  }
  // a step that passes forwarding (Traffic policy, Hairpin, Reachability) never rests on a rule
  // that rejects or drops the traffic: that is no forwarding
  for (const { step, f } of all) {
    if (f.status !== 'pass' || f.info || !FORWARDING.includes(step)) continue;
    for (const e of f.evidence.filter(
      (x) => x.kind === 'observed' && / -j (REJECT|DROP)\b/.test(x.text),
    ))
      out.push(`${step} [${f.id}] passes forwarding with a rule that does not forward: ${e.text}`);
  }
  // a bare ✓ at Reachability needs every node that ran probes (and every
  // node read) to have probed every family of the Service's cluster IPs
  const probe = /^(tcp-connect|udp-probe)_(.+)_\d+$/;
  const stems = Object.entries(facts.nodes).map(([n, o]) => ({ n, stems: Object.keys(o) }));
  const svc = clusterView(facts.objects).services.find((x) => x.name === r.target.service);
  const reach = r.steps.find((s) => s.id === 'reachability');
  if (reach && shownStepStatus(reach) === 'pass') {
    for (const { n, stems: s } of stems) {
      if (s.length > 0 && !s.some((x) => probe.test(x)))
        out.push(`reachability ✓ but ${n} ran no probe`);
      else if (s.length > 0)
        for (const ip of svc?.headless ? [] : (svc?.clusterIPs ?? []))
          if (!s.some((x) => probe.exec(x)?.[2] === ip))
            out.push(`reachability ✓ but ${n} did not probe ${ip}`);
    }
  }
  // a bare ✓ at DNS needs a lookup of the Service's name on every node read
  const dns = r.steps.find((s) => s.id === 'dns');
  if (dns && shownStepStatus(dns) === 'pass' && svc)
    for (const { n, stems: s } of stems)
      if (
        s.length > 0 &&
        !s.some(
          (x) => x.startsWith('dns-lookup_') && x.includes(`_${svc.name}.${svc.namespace}.svc.`),
        )
      )
        out.push(`dns ✓ but ${n} recorded no lookup of ${svc.name}`);
  return out;
}

/** The snapshot, and the snapshot with each node's rules dump (or all its probes) taken away. */
function variants(facts: Facts): { what: string; facts: Facts }[] {
  const out = [{ what: 'as recorded', facts }];
  for (const node of Object.keys(facts.nodes)) {
    const outputs = facts.nodes[node]!;
    const without = (keep: (stem: string) => boolean) => ({
      ...facts,
      nodes: {
        ...facts.nodes,
        [node]: Object.fromEntries(Object.entries(outputs).filter(([stem]) => keep(stem))),
      },
    });
    out.push(
      {
        what: `without ${node}'s rules`,
        facts: without((s) => !/^(ip6?tables|nft-|ipvsadm|ipset)/.test(s)),
      },
      {
        what: `without ${node}'s probes`,
        facts: without((s) => !/^(tcp-connect|udp-probe|icmp-echo|dns-lookup)_/.test(s)),
      },
      // each probe lost alone: the others must not speak for it
      ...Object.keys(outputs)
        .filter((stem) => /^(tcp-connect|udp-probe|dns-lookup)_/.test(stem))
        .map((lost) => ({ what: `without ${node}'s ${lost}`, facts: without((s) => s !== lost) })),
    );
  }
  return out;
}

describe('the contradiction check itself', () => {
  it('flags a pass with a part not observed, or for a node where nothing was observed', () => {
    const f = healthy();
    const r = diagnose(facts(f, dumps(f)), TARGET, { code: allModes });
    const step = r.steps.find((s) => s.id === 'rules')!;
    step.findings.push({
      id: 'rules-match',
      status: 'pass',
      title: 'made up',
      explanation: '',
      evidence: [
        { kind: 'observed', text: 'a rule', node: 'node-a' },
        { kind: 'not-observed', text: 'node-b: not read', node: 'node-b' },
      ],
      nodes: ['node-a', 'node-b'],
    });
    assert.deepEqual(contradictions(r, facts(f, dumps(f))).slice(-2), [
      'rules [rules-match] passes with a part not observed: node-b: not read',
      'rules [rules-match] passes for node-b with nothing observed there',
    ]);
  });
});

describe('findings never contradict each other', () => {
  const dirs = readdirSync('snapshots').filter((d) =>
    existsSync(join('snapshots', d, 'objects.json')),
  );
  for (const dir of dirs)
    it(dir, async () => {
      const base = await readSnapshot(join('snapshots', dir));
      const service = (base.meta.service as string | undefined) ?? 'nginx-svc';
      for (const v of variants(base)) {
        const r = diagnose(
          v.facts,
          { namespace: base.meta.namespace ?? 'default', service },
          { code: allModes },
        );
        assert.deepEqual(contradictions(r, v.facts), [], `${dir}, ${v.what}`);
      }
    });
});

describe('findings never contradict each other on a built cluster (two nodes, web)', () => {
  const objects = healthy();
  const ip = '10.96.0.50';
  const probes = (node: string) => ({
    [`tcp-connect_${ip}_80`]: probeOut.tcpOk(ip, 80),
    'tcp-connect_10.244.0.5_8080': probeOut.tcpOk('10.244.0.5', 8080),
    [`dns-lookup_A_web.default.svc.cluster.local_10.96.0.10`]: probeOut.dig(
      'web.default.svc.cluster.local',
      'A',
      [ip],
    ),
    [`icmp-echo_${ip}`]: probeOut.pingLost(ip),
    node,
  });
  const withProbes = (nodes: string[]): Facts => {
    const f = facts(objects, dumps(objects));
    for (const n of nodes) {
      const { node: _, ...outputs } = probes(n);
      Object.assign(f.nodes[n]!, outputs);
    }
    return f;
  };
  for (const [what, f] of [
    ['rules on both nodes, probes from both', withProbes(['node-a', 'node-b'])],
    ['rules on both nodes, probes from node-a only', withProbes(['node-a'])],
  ] as [string, Facts][])
    it(what, () => {
      for (const v of variants(f)) {
        const r = diagnose(v.facts, TARGET, { code: allModes });
        assert.deepEqual(contradictions(r, v.facts), [], `${what}, ${v.what}`);
      }
    });
});
