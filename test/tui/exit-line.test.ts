// The one line the TUI leaves in the terminal once its screen is gone: the verdict in the text
// report's words, or why there is none. Reports are built by hand: only what the line reads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FindingId } from '../../src/core/findings/finding-ids.js';
import type { Finding, Report, Status, Step } from '../../src/core/model.js';
import type { TuiExit } from '../../src/tui/App.js';
import { exitLine } from '../../src/tui/run.js';

const aStep = (title: string, status: Status, finding?: Finding): Step => ({
  id: title.toLowerCase(),
  title,
  status,
  findings: finding ? [finding] : [],
});
const pass = (title: string) => aStep(title, 'pass');
const pending = (title: string) => aStep(title, 'pending');
const problem = (title: string, status: 'fail' | 'warn', id: FindingId, text: string) =>
  aStep(title, status, { id, status, title: text, explanation: '', evidence: [] });

/** nginx-svc's diagnosis with these steps (its first problem the first failing or warning one),
 * `lost` reads lost. */
function aReport(steps: Step[], lost = 0): Report {
  const at = steps.findIndex((s) => s.status === 'fail' || s.status === 'warn');
  const finding = steps[at]?.findings[0];
  return {
    schemaVersion: 1,
    target: { namespace: 'default', service: 'nginx-svc' },
    steps,
    ...(finding
      ? { firstProblem: { step: at, status: finding.status === 'fail' ? 'fail' : 'warn', finding } }
      : {}),
    pending: steps.some((s) => s.status === 'pending'),
    notRead: Array.from({ length: lost }, (_, i) => ({ what: `node-${i}`, why: 'timed out' })),
    exitCode: finding ? 1 : lost > 0 ? 2 : 0,
  };
}

const typo = problem(
  'Selector',
  'fail',
  'selector-matches-no-pods',
  'selector app=ngnix matches no Pods',
);
const notReady = problem('Selector', 'warn', 'endpoint-not-ready', '1 of 2 Pods is not ready');
const healthy = [pass('Service'), pass('Ports'), pass('Selector'), pass('Endpoints')];
const reading = [pending('Service'), pending('Ports'), pending('Selector'), pending('Endpoints')];

describe('the line the TUI leaves behind', () => {
  for (const [what, exit, line] of [
    [
      'a problem found',
      {
        ended: 'answered',
        report: aReport([pass('Service'), pass('Ports'), typo, pass('Endpoints')]),
      },
      'kdebug: default/nginx-svc: problem at step 3 (Selector): selector app=ngnix matches no Pods [selector-matches-no-pods]',
    ],
    [
      'a warning',
      {
        ended: 'answered',
        report: aReport([pass('Service'), pass('Ports'), notReady, pass('Endpoints')]),
      },
      'kdebug: default/nginx-svc: warning at step 3 (Selector): 1 of 2 Pods is not ready [endpoint-not-ready]',
    ],
    [
      'healthy',
      { ended: 'answered', report: aReport(healthy) },
      'kdebug: default/nginx-svc: no problem found in the steps kdebug could check',
    ],
    [
      'healthy as far as read (exit 2)',
      { ended: 'answered', report: aReport(healthy, 2) },
      'kdebug: default/nginx-svc: no problem found in the steps kdebug could check; partial: the run lost 2 reads',
    ],
    [
      'q before any step finished',
      { ended: 'quit', report: aReport(reading) },
      'kdebug: default/nginx-svc: quit before the diagnosis completed (nothing was checked)',
    ],
    [
      'ctrl+c before any step finished',
      { ended: 'interrupted', report: aReport(reading) },
      'kdebug: default/nginx-svc: interrupted before the diagnosis completed (nothing was checked)',
    ],
    [
      'q with the API objects checked, the nodes still read',
      {
        ended: 'quit',
        report: aReport([
          pass('Service'),
          pending('Ports'),
          pending('Selector'),
          pending('Endpoints'),
        ]),
      },
      'kdebug: default/nginx-svc: quit before the diagnosis completed (no problem in the 1 step checked so far)',
    ],
    [
      'q with a problem found already',
      {
        ended: 'quit',
        report: aReport([pass('Service'), pass('Ports'), typo, pending('Endpoints')]),
      },
      'kdebug: default/nginx-svc: quit before the diagnosis completed; so far: problem at step 3 (Selector): selector app=ngnix matches no Pods [selector-matches-no-pods]',
    ],
    [
      'nothing could be read',
      { ended: 'unread', reason: 'cannot reach the API server at https://127.0.0.1:1' },
      'kdebug: cannot reach the API server at https://127.0.0.1:1',
    ],
    ['the rules screens: nothing diagnosed, nothing to say', { ended: 'answered' }, undefined],
    [
      'the rules screens, q while reading again',
      { ended: 'quit' },
      'kdebug: quit before the facts were read',
    ],
  ] as [string, TuiExit, string | undefined][])
    it(what, () => assert.deepEqual(exitLine(exit, 200), line === undefined ? [] : [line]));

  it('fits the terminal: wrapped at its width, the rest indented, one message', () => {
    const exit: TuiExit = { ended: 'answered', report: aReport([pass('Service'), typo]) };
    const lines = exitLine(exit, 40);
    assert.deepEqual(lines, [
      'kdebug: default/nginx-svc: problem at',
      '  step 2 (Selector): selector app=ngnix',
      '  matches no Pods',
      '  [selector-matches-no-pods]',
    ]);
  });

  it('shows text from the cluster inert: each control escaped, none reaches the terminal', () => {
    const title = 'selector app=\x1b]0;pwned\x07ngnix\x1b[2J matches no Pods';
    const evil = problem('Selector', 'fail', 'selector-matches-no-pods', title);
    const [line] = exitLine({ ended: 'answered', report: aReport([evil]) }, 200);
    assert.equal(
      line,
      'kdebug: default/nginx-svc: problem at step 1 (Selector): selector app=\\x1b]0;pwned\\x07ngnix\\x1b[2J matches no Pods [selector-matches-no-pods]',
    );
  });
});
