// An `iptables -L` row written as a template (klipper-lb#54): placeholders typed where -L prints
// an address or a port ("{{ node's external ip }}"). -L prints no blank inside a column, so a
// placeholder is one column, not read as an address; the rest of the row, its comment above all,
// is read as -L printed it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const HEADER = [
  'Chain KUBE-SERVICES (2 references)',
  'target     prot opt source               destination         ',
];
const row = (destination: string, comment: string, port: string) =>
  `KUBE-EXT-6LG7QS4WGVG7546G  tcp  --  anywhere             ${destination}  /* ${comment} */ tcp dpt:${port}`;

describe('placeholders in an iptables -L row', () => {
  it("the comment after a placeholder address says the entry's kind", () => {
    for (const [destination, port] of [
      ["{{ node's external ip }}", '{{ service port }}'],
      ['{{node_ip}}', '80'],
    ]) {
      const got = readPaste(
        [...HEADER, row(destination!, 'default/web:http loadbalancer IP', port!)].join('\n'),
        {
          file: 'p.txt',
        },
      );
      assert.ok(got.mode === 'iptables', got.mode);
      const text = rulesText(got.dump, got.trees, { label: 'p' });
      const [entry] = got.trees.services[0]!.entries;
      assert.equal(entry?.kind, 'load-balancer', text);
      assert.equal(got.trees.services[0]!.name, 'default/web:http', text);
      assert.equal(entry?.address, undefined, text);
      assert.doesNotMatch(text, /a listing does not say which/);
    }
  });
});
