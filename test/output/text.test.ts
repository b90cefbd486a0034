import assert from 'node:assert/strict';
import { read, seen } from '../../src/core/findings/evidence.js';
import { shellWords } from '../../src/core/findings/next-command.js';
import { describe, it } from 'node:test';
import { concluded } from '../../src/core/diagnose.js';
import type { FindingId } from '../../src/core/findings/finding-ids.js';
import type { Finding, Report, Status } from '../../src/core/model.js';
import { reportText, wrap, wrapCommand } from '../../src/output/text.js';

const f = (id: FindingId, status: Status, extra: Partial<Finding> = {}): Finding => ({
  id,
  status,
  title: `${id} title`,
  explanation: `${id} explanation`,
  evidence: [read(`${id} evidence`)],
  ...extra,
});
const report = (steps: { id: string; status: Status; findings: Finding[] }[]): Report =>
  concluded({
    schemaVersion: 1,
    target: { namespace: 'default', service: 'web' },
    context: 'kind-kind',
    service: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.50',
      ports: ['http 80/TCP -> 8080'],
      proxyMode: 'iptables',
    },
    steps: steps.map((s) => ({ ...s, title: s.id[0]!.toUpperCase() + s.id.slice(1) })),
  });

describe('text output', () => {
  it('wraps at the width with a hanging indent; a word longer than a line stays whole on its own', () => {
    assert.deepEqual(wrap('aaa bbb ccc ddd', 9, '  ', '    '), ['  aaa bbb', '    ccc', '    ddd']);
    assert.deepEqual(wrap('x'.repeat(12), 8, '', '  '), ['x'.repeat(12)]);
    assert.deepEqual(wrap(`a ${'x'.repeat(12)} b`, 8, '', '  '), [
      'a',
      `  ${'x'.repeat(12)}`,
      '  b',
    ]);
    // a pane's lines must fit: there it fills the line and carries on
    assert.deepEqual(wrap('x'.repeat(12), 8, '', '  ', true), ['xxxxxxxx', '  xxxx']);
    for (const line of wrap('word '.repeat(60), 80, '   ', '     '))
      assert.ok(line.length <= 80, line);
  });

  it('wraps a command between its words, with shell continuations', () => {
    const patch = { argv: ['kubectl', '-n', 'default', 'patch', 'service', 'web', '--type=merge'] };
    const lines = wrapCommand(
      shellWords({ argv: [...patch.argv, '-p', '{"spec": {"selector": {"app": "web"}}}'] }),
      50,
      '  ',
    );
    assert.deepEqual(lines, [
      '  kubectl -n default patch service web \\',
      `    --type=merge -p \\`,
      `    '{"spec": {"selector": {"app": "web"}}}'`,
    ]);
  });

  it('lists what was not observed under a problem, as under a pass and as JSON does', () => {
    const failing = report([
      { id: 'selector', status: 'fail', findings: [f('selector-matches-no-pods', 'fail')] },
    ]);
    const text = reportText({ ...failing, unobserved: ['DNS: no recorded lookup'] });
    assert.match(text, /^Problem at step 1 \(Selector\)/m);
    assert.match(text, /^1 check not observed: DNS: no recorded lookup$/m);
  });

  it('shows each step on one line, expands failures and warnings, not passes', () => {
    const text = reportText(
      report([
        { id: 'service', status: 'pass', findings: [f('service-found', 'pass')] },
        {
          id: 'selector',
          status: 'fail',
          findings: [
            f('selector-matches-no-pods', 'fail', {
              next: { argv: ['kubectl', 'get', 'pods', '--show-labels'] },
            }),
          ],
        },
        { id: 'endpoints', status: 'warn', findings: [f('no-ready-endpoints', 'warn')] },
      ]),
    );
    assert.match(text, /^ ✓ {2}1 Service +service-found title$/m);
    assert.match(text, /^ ✗ {2}2 Selector +selector-matches-no-pods title$/m);
    assert.match(text, /^ {7}\[selector-matches-no-pods\]$/m);
    assert.match(text, /^ {7}selector-matches-no-pods explanation$/m);
    assert.match(text, /^ {9}kubectl get pods --show-labels$/m);
    assert.match(text, /^ {7}no-ready-endpoints explanation$/m);
    assert.doesNotMatch(text, /service-found explanation/);
    assert.match(text, /Problem at step 2 \(Selector\): selector-matches-no-pods title/);
  });

  it('expands informational findings, and everything with verbose', () => {
    const r = report([
      {
        id: 'reachability',
        status: 'pass',
        findings: [
          f('clusterip-reachable', 'pass'),
          f('ping-clusterip-explained', 'pass', { info: true }),
        ],
      },
    ]);
    const text = reportText(r);
    assert.match(text, /^ {5}i ping-clusterip-explained title$/m);
    assert.doesNotMatch(text, /clusterip-reachable explanation/);
    assert.match(reportText(r, { verbose: true }), /clusterip-reachable explanation/);
    assert.match(text, /No problem found/);
  });

  it('colours only when asked, and never passes control characters from the cluster through', () => {
    const r = report([
      {
        id: 'service',
        status: 'fail',
        findings: [f('service-not-found', 'fail', { title: 'evil \x1b]0;owned\x07 name' })],
      },
    ]);
    const ESC = String.fromCharCode(27);
    assert.ok(!reportText(r).includes(ESC));
    const coloured = reportText(r, { color: true });
    assert.ok(coloured.includes(`${ESC}[1;31m✗${ESC}[0m`));
    assert.ok(!coloured.includes(`${ESC}]0;`));
  });

  it('fits 80 columns', () => {
    const long = f('clusterip-unreachable', 'fail', {
      title: 'word '.repeat(40),
      explanation: 'long '.repeat(100),
      evidence: [seen('-A KUBE-SERVICES '.repeat(20))],
      next: { argv: Array<string>(30).fill('kubectl') },
    });
    for (const line of reportText(
      report([{ id: 'rules', status: 'fail', findings: [long] }]),
    ).split('\n'))
      assert.ok([...line].length <= 80, line);
  });
});
