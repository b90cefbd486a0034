// The Corefile's kubernetes plugin line, read line by line: a multiline `^\s*kubernetes\s+` over
// the whole Corefile went quadratic on a run of blank lines (50,000 newlines took 35 s).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubernetesPlugin } from '../../../src/core/checks/dns/records.js';

describe("the Corefile's kubernetes plugin line", () => {
  it('reads its zones, with the blank lines just above it as before', () => {
    const corefile =
      '.:53 {\n    errors\n\n    kubernetes cluster.local in-addr.arpa {\n    }\n}\n';
    assert.deepEqual(kubernetesPlugin(corefile), {
      line: '\n    kubernetes cluster.local in-addr.arpa ',
      zones: 'cluster.local in-addr.arpa ',
    });
    assert.equal(kubernetesPlugin('.:53 {\n    errors\n}\n'), undefined);
  });

  it('reads 100,000 blank lines in linear time', () => {
    for (const text of ['\n'.repeat(100_000) + 'x', '\n'.repeat(100_000) + '  kubernetes a.b\n']) {
      const start = Date.now();
      kubernetesPlugin(text);
      assert.ok(Date.now() - start < 2000, `${Date.now() - start} ms`);
    }
  });
});
