// An iptables dump cut mid-line (r137's cut-save-mid-port.txt): iptables-save ends every line
// with a newline, so a node's recorded dump whose last line has none was cut there and that line
// is not read; a paste's is read and said "may be cut" where its last word is a value a cut
// could shorten; a KUBE-SEP DNAT without the port kube-proxy always writes is cut.
// IPs: Service CIDR 10.1.0.0/16, Pod CIDR 10.244.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';

const SVC = `-A KUBE-SVC-ELCM5PCEQWBTUJ2I -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-SMDVMBZNJPO5AA7R
-A KUBE-SVC-ELCM5PCEQWBTUJ2I -j KUBE-SEP-FNO4E6JYD7EGUHTP
-A KUBE-SEP-SMDVMBZNJPO5AA7R -p tcp -m tcp -j DNAT --to-destination 10.244.0.3:80
`;
/** Cut inside the last endpoint's port: ":8" of ":80". */
const CUT = `${SVC}-A KUBE-SEP-FNO4E6JYD7EGUHTP -p tcp -m tcp -j DNAT --to-destination 10.244.1.7:8`;

const rulesOf = (text: string, noun?: 'dump') => {
  const rs = parseIptables(text, { file: 'f', ...(noun ? { noun } : {}) });
  const nat = rs.table('nat')!;
  const at = nat.indexOf('KUBE-SEP-FNO4E6JYD7EGUHTP');
  return { rs, sep: at < 0 ? 0 : nat.ruleCountOf(at) };
};

describe('iptables: a last line without its newline', () => {
  it("a node's recorded dump: cut there, the line not read", () => {
    const { rs, sep } = rulesOf(CUT, 'dump');
    assert.equal(sep, 0);
    assert.equal(rs.cut?.line, 4);
    assert.match(rs.cut?.message ?? '', /the dump is cut at line 4: .*has no newline/);
  });

  it('a paste: read, and said to be perhaps cut where its last word is a value', () => {
    const { rs, sep } = rulesOf(CUT);
    assert.equal(sep, 1);
    assert.equal(rs.cut, undefined);
    const w = rs.warnings.find((x) => x.kind === 'unterminated');
    assert.equal(w?.line, 4);
    assert.match(w?.message ?? '', /may be cut there, its last word short \("10\.244\.1\.7:8"\)/);
    // ended by its newline, or by a whole name: nothing to say
    assert.ok(!rulesOf(`${CUT}0\n`).rs.warnings.some((x) => x.kind === 'unterminated'));
    const named = `${SVC}-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS`;
    assert.ok(!rulesOf(named).rs.warnings.some((x) => x.kind === 'unterminated'));
  });

  it('a KUBE-SEP DNAT without the port kube-proxy writes is cut, newline or not', () => {
    for (const end of ['', '\n']) {
      const { rs, sep } = rulesOf(
        `${SVC}-A KUBE-SEP-FNO4E6JYD7EGUHTP -p tcp -m tcp -j DNAT --to-destination 10.244.1.7${end}`,
      );
      assert.equal(sep, 0);
      assert.match(rs.cut?.message ?? '', /DNAT to 10\.244\.1\.7 without the port/);
    }
  });
});
