// Exact frames of each screen at 80 columns (the body of a 24-line terminal), read and checked by
// a person: layout, marks, the selection gutter, wrapping. The Diagnosis gets a Report the core
// builds from builders (test/tui/fixtures.ts), Drift and Trace hand-made drift and walks; Rules
// and Search read the demo snapshot. IP conventions: see fixtures.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReactNode } from 'react';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import { analyze, type NodeData } from '../../src/tui/data.js';
import { Diagnosis, diagModel } from '../../src/tui/screens/Diagnosis.js';
import { Drift, driftModel } from '../../src/tui/screens/Drift.js';
import { Rules, rulesModel } from '../../src/tui/screens/Rules.js';
import { Search, highlight, searchModel } from '../../src/tui/screens/Search.js';
import { Trace, walkLines, type TraceModel } from '../../src/tui/screens/Trace.js';
import type { TraceDestination, TraceSource } from '../../src/tui/screens/trace-model.js';
import { initialState, reduce, type State } from '../../src/tui/state.js';
import { hairpinWalk, staleDrift, typoReport } from './fixtures.js';
import { frame, renderPlain, settle } from './harness.js';
import { allModes } from '../support/modes.js';

const WIDTH = 80;
const HEIGHT = 20; // 24 rows: header 2, footer 1, one left free

async function shot(node: ReactNode): Promise<string> {
  const r = renderPlain(node);
  await settle();
  const out = frame(r);
  r.unmount();
  // framed by newlines, like the expected frames below
  return `\n${out}\n`;
}

const facts = await readSnapshot(new URL('../../snapshots/nginx-svc', import.meta.url).pathname);
const demo = analyze(
  { facts, code: allModes },
  { target: { namespace: 'default', service: 'nginx-svc' } },
);
const NODE_7 = demo.nodes.findIndex((n) => n.name === 'vm-12-7-centos');

describe('Diagnosis frames', () => {
  // the first failing step is selected as the report arrives
  const s = reduce(initialState('diag'), { type: 'report', firstProblem: 2 });

  it('steps with their marks, the failing one selected, its findings on the right, its next command below, whole', async () => {
    const out = await shot(
      <Diagnosis model={diagModel(s, typoReport, WIDTH, HEIGHT)} state={s} tick={0} />,
    );
    assert.equal(
      out,
      `
┏━━━━━━━━━━━━━━━━━━━━━━━━━━┓┌──────────────────────────────────────────────────┐
┃Steps             1 failed┃│Findings                      enter: open  1-14/20│
┃ ✓  1 Service             ┃│ Selector: failed                                 │
┃ -  2 Ports               ┃│                                                  │
┃›✗  3 Selector            ┃│ ✗ selector app=wbe matches no Pods               │
┃ !  4 Endpoints           ┃│   selector-matches-no-pods                       │
┃ ⠋  5 DNS                 ┃│   No Pod in namespace default has all the labels │
┃ ◐  6 kube-proxy          ┃│   app=wbe, so the endpoint controller finds no   │
┃ ⠋  7 Rules               ┃│   Pods: the Service has no endpoints, and        │
┃ ⠋  8 Reachability        ┃│   kube-proxy rejects connections to it. The      │
┃ ⠋  9 Traffic policy      ┃│   nearest miss: Pods web-1 and web-2 of          │
┃ ⠋ 10 Hairpin             ┃│   Deployment web have app=web where the selector │
┃                          ┃│   wants app=wbe. Either correct the Service's    │
┃                          ┃│   selector or the Pods' labels (in their         │
┃                          ┃│   workload's Pod template).                      │
┃                          ┃│   Evidence:                                      │
┗━━━━━━━━━━━━━━━━━━━━━━━━━━┛└──────────────────────────────────────────────────┘
Next:
kubectl -n default patch service web --type=merge -p \\
  '{"spec":{"selector":{"app":"web"}}}'
`,
    );
  });

  it('focus on the findings: the first one marked, the spinner turning', async () => {
    const t: State = { ...s, pane: { ...s.pane, diag: 1 } };
    const out = await shot(
      <Diagnosis model={diagModel(t, typoReport, WIDTH, HEIGHT)} state={t} tick={3} />,
    );
    assert.equal(
      out,
      `
┌──────────────────────────┐┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
│Steps             1 failed│┃Findings                 enter: its rules  1-14/20┃
│ ✓  1 Service             │┃ Selector: failed                                 ┃
│ -  2 Ports               │┃                                                  ┃
│›✗  3 Selector            │┃›✗ selector app=wbe matches no Pods               ┃
│ !  4 Endpoints           │┃   selector-matches-no-pods                       ┃
│ ⠸  5 DNS                 │┃   No Pod in namespace default has all the labels ┃
│ ◐  6 kube-proxy          │┃   app=wbe, so the endpoint controller finds no   ┃
│ ⠸  7 Rules               │┃   Pods: the Service has no endpoints, and        ┃
│ ⠸  8 Reachability        │┃   kube-proxy rejects connections to it. The      ┃
│ ⠸  9 Traffic policy      │┃   nearest miss: Pods web-1 and web-2 of          ┃
│ ⠸ 10 Hairpin             │┃   Deployment web have app=web where the selector ┃
│                          │┃   wants app=wbe. Either correct the Service's    ┃
│                          │┃   selector or the Pods' labels (in their         ┃
│                          │┃   workload's Pod template).                      ┃
│                          │┃   Evidence:                                      ┃
└──────────────────────────┘┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
Next:
kubectl -n default patch service web --type=merge -p \\
  '{"spec":{"selector":{"app":"web"}}}'
`,
    );
  });
});

describe('Diagnosis marks', () => {
  it('an information finding is marked i, as text marks it, not as a skip', async () => {
    const report = diagnose(
      facts,
      { namespace: 'default', service: 'nginx-svc' },
      { code: allModes },
    );
    const dns = report.steps.findIndex((x) => x.id === 'dns');
    const t = reduce(initialState('diag'), { type: 'report', firstProblem: dns });
    const out = await shot(<Diagnosis model={diagModel(t, report, 120, 60)} state={t} tick={0} />);
    assert.match(out, /│ i nginx-svc, nginx-svc\.default and /);
  });
});

describe('Rules frame', () => {
  it('the target Service open, an endpoint selected, its raw rules below', async () => {
    const s: State = { ...initialState('rules', NODE_7), raw: true, cursor: { 'rules.0': 5 } };
    const m = rulesModel(s, demo.nodes, 'default/nginx-svc', WIDTH, HEIGHT);
    assert.equal(
      await shot(<Rules model={m} state={s} />),
      `
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃Rules                                        vm-12-7-centos (2/2, n/p)  1-7/10┃
┃ ▸ default/kubernetes:https 10.1.0.1:443/tcp 1 endpoint                       ┃
┃ ▾ default/nginx-svc:http 10.1.190.219:8080/tcp 2 endpoints                   ┃
┃   cluster IP 10.1.190.219:8080/tcp → KUBE-SVC-ELCM5PCEQWBTUJ2I               ┃
┃   masq ! -s 10.244.0.0/16 (KUBE-SERVICES)                                    ┃
┃   ▾ KUBE-SVC-ELCM5PCEQWBTUJ2I (2)                                            ┃
┃›       50% 10.244.0.3:80 KUBE-SEP-SMDVMBZNJPO5AA7R hairpin✓                  ┃
┃        50% 10.244.1.7:80 KUBE-SEP-FNO4E6JYD7EGUHTP hairpin✓                  ┃
┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
┌──────────────────────────────────────────────────────────────────────────────┐
│Raw rules KUBE-SEP-SMDVMBZNJPO5AA7R                          3 lines, r closes│
│92: -A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability     │
│    0.50000000000 -j KUBE-SEP-SMDVMBZNJPO5AA7R                                │
│75: -A KUBE-SEP-SMDVMBZNJPO5AA7R -s 10.244.0.3/32 -j KUBE-MARK-MASQ           │
│76: -A KUBE-SEP-SMDVMBZNJPO5AA7R -p tcp -m tcp -j DNAT --to-destination       │
│    10.244.0.3:80                                                             │
│                                                                              │
│                                                                              │
└──────────────────────────────────────────────────────────────────────────────┘
`,
    );
  });
});

describe('Search frame', () => {
  it('results as you type, best first', async () => {
    const s: State = { ...initialState('rules', NODE_7), modal: 'search', query: 'nginx' };
    const m = searchModel(s, demo.nodes, WIDTH, HEIGHT);
    assert.equal(
      await shot(<Search model={m} />),
      `
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃Search                                      2 matches, enter jumps, esc closes┃
┃/nginx▏                                                                       ┃
┃›service  default/nginx-svc:http                                              ┃
┃ rule     default/nginx-svc:http cluster IP  nat KUBE-SERVICES:81             ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
`,
    );
  });

  it('cuts a hit into plain and matched pieces for highlighting', () => {
    assert.deepEqual(highlight('default/nginx-svc:http', [[8, 12]]), [
      { text: 'default/', match: false },
      { text: 'nginx', match: true },
      { text: '-svc:http', match: false },
    ]);
    assert.deepEqual(
      highlight('ab', [
        [0, 0],
        [1, 1],
      ]),
      [{ text: 'ab', match: true }],
    );
    // a control is shown escaped, as the text's other screens show it
    assert.deepEqual(highlight('svc \x1b]0;pwned\x07 IP', [[8, 12]]), [
      { text: 'svc \\x1b]0;', match: false },
      { text: 'pwned', match: true },
      { text: '\\x07 IP', match: false },
    ]);
  });
});

describe('Drift frame', () => {
  it('grouped by Service port, ids shown, missing and unexpected lines told apart', async () => {
    const node = {
      name: 'vm-12-11-centos',
      held: 'dump',
      family: 'IPv4',
      label: 'vm-12-11-centos',
      walkable: false,
      search: () => undefined,
      drift: () => staleDrift,
      trace: () => {
        throw new Error('not walked here');
      },
    } as NodeData;
    const m = driftModel(initialState('drift'), [node], WIDTH, HEIGHT);
    assert.equal(
      await shot(<Drift model={m} />),
      `
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃Drift                                                          vm-12-11-centos┃
┃2 to fix  - missing (expected, not on the node)  + unexpected                 ┃
┃ default/nginx-svc:http                                                       ┃
┃›✗ endpoint-stale  DNAT to 10.244.1.9:80, no longer an endpoint               ┃
┃     Half of new connections go to a Pod that is gone.                        ┃
┃     - -t nat -A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-FNO4E6JYD7EGUHTP       ┃
┃     + -A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-STALE0000000000               ┃
┃                                                                              ┃
┃ node-wide                                                                    ┃
┃ ! orphan-chain  KUBE-SVC-OLD0000000000000 is reached by nothing              ┃
┃     + -A KUBE-SVC-OLD0000000000000 -j KUBE-SEP-OLD0000000000000              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┃                                                                              ┃
┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛
`,
    );
  });
});

describe('Trace walk words', () => {
  it('a packet a process on the node sends is "sent out by the node", as text says, not "forwarded"', () => {
    const source = {
      kind: 'node',
      label: 'node',
      node: 'n',
      ip: '10.0.12.11',
      family: 'IPv4',
      fromHost: true,
    } as const;
    const dest = { label: 'svc', ip: '10.1.190.219', port: 8080, protocol: 'tcp' } as const;
    const fromHost = { ...hairpinWalk, packet: { ...hairpinWalk.packet, fromHost: true } };
    const text = walkLines({ result: fromHost }, source, dest, 200)
      .map((l) => l.text)
      .join('\n');
    assert.match(text, /sent out by the node/);
    assert.doesNotMatch(text, /forwarded/);
  });
});

describe('Trace frame', () => {
  it('source and destination pickers, the walk with each branch and its share', async () => {
    const pod: TraceSource = {
      kind: 'pod',
      label: 'Pod 10.244.1.7 nginx-55fc968d9-4pddn',
      node: 'vm-12-11-centos',
      ip: '10.244.1.7',
      family: 'IPv4',
      fromHost: false,
    };
    const host: TraceSource = {
      ...pod,
      kind: 'node',
      label: 'node 10.0.12.11 vm-12-11-centos',
      ip: '10.0.12.11',
      family: 'IPv4',
      fromHost: true,
    };
    const svc: TraceDestination = {
      label: '10.1.190.219:8080/tcp nginx-svc:http',
      ip: '10.1.190.219',
      port: 8080,
      protocol: 'tcp',
    };
    const ping: TraceDestination = {
      label: 'ping 10.1.190.219 nginx-svc:http',
      ip: '10.1.190.219',
      protocol: 'icmp',
    };
    const m: TraceModel = {
      sources: [pod, host],
      dests: [svc, ping],
      source: 0,
      dest: 0,
      lines: walkLines({ result: hairpinWalk }, pod, svc, WIDTH - 2),
      top: 0,
      width: WIDTH,
      pickHeight: 8,
      walkHeight: HEIGHT - 8,
    };
    assert.equal(
      await shot(<Trace model={m} state={initialState('trace')} />),
      `
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓┌──────────────────────────────────────┐
┃Source                             1/2┃│Destination                        1/2│
┃›Pod 10.244.1.7 nginx-55fc968d9-4pddn ┃│›10.1.190.219:8080/tcp nginx-svc:http │
┃ node 10.0.12.11 vm-12-11-centos      ┃│ ping 10.1.190.219 nginx-svc:http     │
┃                                      ┃│                                      │
┃                                      ┃│                                      │
┃                                      ┃│                                      │
┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛└──────────────────────────────────────┘
┌──────────────────────────────────────────────────────────────────────────────┐
│Packet walk                                                             1-9/12│
│tcp 10.244.1.7 -> 10.1.190.219:8080 on vm-12-11-centos, from a Pod (nat       │
│PREROUTING)                                                                   │
│  50%  DNAT to 10.244.0.3:80  not masqueraded  forwarded                      │
│  50%  DNAT to 10.244.1.7:80  masqueraded  forwarded                          │
│                                                                              │
│branch 1: 50%  DNAT to 10.244.0.3:80  not masqueraded  forwarded              │
│  nat KUBE-SVC-ELCM5PCEQWBTUJ2I:92  50% branch, jump KUBE-SEP-SMDVMBZNJPO5AA7R│
│    -A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability 0.5 │
│      -j KUBE-SEP-SMDVMBZNJPO5AA7R                                            │
└──────────────────────────────────────────────────────────────────────────────┘
`,
    );
  });
});
