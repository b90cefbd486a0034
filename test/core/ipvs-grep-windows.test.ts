// ipvsadm's listing piped through grep: grep prints the lines matching its pattern and, with
// -A/-B/-C, a window around each, so a virtual server's real servers may go on past the last line
// it printed. No share and no "no endpoints" is stated beyond what the window proves; a window
// shorter than its size ends where the input did.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { buildIpvsTrees } from '../../src/core/dataplane/ipvs/trees.js';

const HEAD = '$ ipvsadm -ln | head -n 1\nIP Virtual Server version 1.2.1 (size=4096)\n';
const VS = 'TCP  10.96.0.1:443 rr\n';
const RS = (n: number) => `  -> 172.18.0.${n}:6443              Masq    1      0          0\n`;

const tree = (text: string) => buildIpvsTrees(parseIpvs(text)).services[0]!;

describe("a grep's window over ipvsadm -Ln", () => {
  it('a full -A window may end inside the real servers: their shares are unknown', () => {
    const t = tree(`${HEAD}$ ipvsadm -ln | grep -A1 10.96.0.1\n${VS}${RS(2)}`);
    assert.match(t.partial ?? '', /grep's window \(-A 1, typed at line 3\) may end .* at line 5/);
    assert.ok(t.endpoints.every((e) => e.shareUnknown !== undefined));
  });

  it('a window shorter than -A asks ended with the input: the real servers are all', () => {
    const t = tree(`$ ipvsadm -ln | grep -A3 10.96.0.1\n${VS}${RS(2)}`);
    assert.equal(t.partial, undefined);
    assert.deepEqual(
      t.endpoints.map((e) => e.probability),
      [1],
    );
  });

  it('a command after grep that may drop lines (head, sed ...): a short window is no input end', () => {
    for (const then of ['head -3', 'sed 3q', 'awk "NR<4"', 'tail -n 3', 'grep -v Route']) {
      const t = tree(`$ ipvsadm -Ln | grep -A 10 10.96.0.1 | ${then}\n${VS}${RS(2)}${RS(3)}`);
      const name = then.split(' ')[0]!;
      assert.match(
        t.partial ?? '',
        new RegExp(
          `\\(-A 10, typed at line 1; \`${name}\` after grep in the pipe may drop lines\\) may end`,
        ),
        then,
      );
      assert.ok(
        t.endpoints.every((e) => e.shareUnknown !== undefined),
        then,
      );
    }
    // a command that passes every line on changes nothing
    assert.equal(
      tree(`$ ipvsadm -ln | grep -A3 10.96.0.1 | cat\n${VS}${RS(2)}`).partial,
      undefined,
    );
  });

  it('a command before grep that may drop lines (head, sed ...): a short window is no input end', () => {
    for (const first of ['head -5', 'sed 5q', 'tail -n 5', 'grep -v Route']) {
      const t = tree(`# ipvsadm -Ln | ${first} | grep -A3 10.96.0.1\n${VS}${RS(2)}`);
      const name = first.split(' ')[0]!;
      assert.match(
        t.partial ?? '',
        new RegExp(
          `\\(-A 3, typed at line 1; \`${name}\` before grep in the pipe may drop lines\\)`,
        ),
        first,
      );
      assert.ok(
        t.endpoints.every((e) => e.shareUnknown !== undefined),
        first,
      );
    }
    // one that passes every line on changes nothing
    assert.equal(
      tree(`# ipvsadm -Ln | cat | grep -A3 10.96.0.1\n${VS}${RS(2)}`).partial,
      undefined,
    );
  });

  it('grep without -A prints matching lines only: a virtual server alone is no "no endpoints"', () => {
    const t = tree(`${HEAD}$ ipvsadm -ln | grep 10.96.0.1\n${VS}`);
    assert.match(t.partial ?? '', /grep \(typed at line 3\) printed only the lines matching/);
  });

  it("-B's real servers above the first virtual server are another's, not read", () => {
    const table = parseIpvs(`${HEAD}$ ipvsadm -ln | grep -B1 10.96.0.1\n${RS(9)}${VS}`);
    assert.deepEqual(table.ownerAbove, [4]);
    assert.match(table.services[0]!.partial ?? '', /and those before them/);
  });
});
