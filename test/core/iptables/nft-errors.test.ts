// nft's own error reports pasted where rules were asked for: named as nft's errors, with what nft
// said quoted on one line (escaped), for a file's input (FILE:LINE:COL: Error:) and a command typed
// (Error: alone, the command and its carets under it, as erec_print writes both).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const said = (text: string): string => {
  try {
    const got = readPaste(text, { file: 'p.txt' });
    return got.mode === 'not-kube-proxy' ? got.message : `read as ${got.mode}`;
  } catch (e) {
    return (e as Error).message;
  }
};

describe("nft's error reports", () => {
  it("kube-proxy's sync failure in its klog block: the first error quoted, the others counted", () => {
    const m = said(
      [
        'E0911 16:35:49.547707       1 proxier.go:1851] "nftables sync failed" err=<',
        '\t/dev/stdin:72:109-112: Error: Interface does not exist\x07',
        '\tadd rule ip kube-proxy service-2QRHZV4L-default/kubernetes/tcp/https ip daddr 10.0.0.1 tcp dport 443 iif != azv* jump mark-for-masquerade',
        '\t                                                                                                            ^^^^',
        '\t/dev/stdin:84:109-112: Error: Interface does not exist\x1b[31m',
        ' >',
      ].join('\n'),
    );
    assert.match(
      m,
      /nft said on line 2: "\/dev\/stdin:72:109-112: Error: Interface does not exist\\x07" \(and 1 more of nft's errors\)/,
    );
    assert.ok(
      [...m].every((ch) => ch.charCodeAt(0) >= 0x20),
      'one line, its control byte escaped',
    );
  });

  it('a command typed: its "Error:" line, named as nft\'s, ENOENT said as the table not on the node', () => {
    const m = said(
      [
        '$ sudo nft list table ip kube-proxy',
        'Error: No such file or directory',
        'list table ip kube-proxy',
        '              ^^^^^^^^^^',
      ].join('\n'),
    );
    assert.match(m, /this is nft's error for a command typed/);
    assert.match(m, /nft said on line 2: "Error: No such file or directory" \(ENOENT: the table/);
    assert.doesNotMatch(m, /iptables-save or iptables -S/);
  });

  it('another tool\'s "Error:" line, no carets under the line after it: not called nft\'s', () => {
    const m = said(
      ['$ kubectl get svc', 'Error: unknown flag: --foo', 'See kubectl --help'].join('\n'),
    );
    assert.doesNotMatch(m, /nft/);
  });
});
