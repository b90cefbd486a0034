// Cilium's status in a documentation diff (cilium#22421): its kube-proxy replacement details
// ("Session Affinity:   Disabled") are the agent's settings, named as Cilium's status, not
// `kubectl describe svc`, whose Session Affinity is the Service's field (None or ClientIP).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyLine } from '../../../src/core/dataplane/iptables/read/paste/other-lines/classify.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const FRAGMENT = [
  'Documentation/network/standalone.rst',
  '```diff',
  '+     Session Affinity:       Disabled',
  '+     Graceful Termination:   Enabled',
  '+     NAT46/64 Support:       Enabled',
  '+     XDP Acceleration:       Native',
  '+   [...]',
  '```',
].join('\n');

describe("Cilium's Session Affinity setting", () => {
  it("is not kubectl describe svc's field; the Service's is", () => {
    assert.deepEqual(classifyLine('Session Affinity:       Disabled'), {
      kind: 'foreign',
      foreign: 'cilium-status',
    });
    assert.deepEqual(classifyLine('Session Affinity:   Enabled'), {
      kind: 'foreign',
      foreign: 'cilium-status',
    });
    assert.deepEqual(classifyLine('Session Affinity:  None'), {
      kind: 'foreign',
      foreign: 'kubectl-describe-svc',
    });
    assert.deepEqual(classifyLine('Session Affinity:\tClientIP'), {
      kind: 'foreign',
      foreign: 'kubectl-describe-svc',
    });
  });

  it("a status fragment in a diff is named Cilium's status, not kubectl output", () => {
    assert.throws(
      () => readPaste(FRAGMENT, { file: 'p.txt' }),
      (e: Error) =>
        !/kubectl output/.test(e.message) &&
        /Cilium's status .*Cilium replaces kube-proxy on this node/.test(e.message),
    );
  });
});
