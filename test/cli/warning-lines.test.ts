// The built `kdebug rules --file FILE` in each mode: every warning -o json gives a line is said in
// the text at FILE:LINE, as a parse error is, never as a bare "line N".
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

/** Wide enough that no warning wraps: each is compared whole. */
const WIDE = { env: { COLUMNS: '4000' } };
const PASTES = 'test/fixtures/pastes';

type Doc = {
  warnings: { line: number | null; kind: string; message: string; lines?: number[] }[];
};

/** The text's warning lines, and the JSON's warnings that have a line (an nft paste's skipped
 * lines are told on stderr, not in the text). */
function both(args: string[], input?: string) {
  const text = kdebug(['rules', ...args], { ...WIDE, ...(input ? { input } : {}) });
  assert.equal(text.code, 0, text.stderr);
  const json = kdebug(['rules', ...args, '-o', 'json'], input ? { input } : {});
  const doc = JSON.parse(json.stdout) as Doc;
  return {
    said: text.stdout.split('\n').filter((l) => l.startsWith('warning:')),
    lined: doc.warnings.filter((w) => w.line !== null && w.kind !== 'skipped'),
  };
}

function saysEachAt(file: string, args: string[], kinds: string[], input?: string) {
  const { said, lined } = both(args, input);
  assert.deepEqual([...new Set(lined.map((w) => w.kind))].sort(), [...kinds].sort());
  for (const w of lined)
    assert.ok(said.includes(`warning: ${file}:${w.line}: ${w.message}`), w.message);
  assert.deepEqual(
    said.filter((l) => /^warning: lines? \d+:/.test(l)),
    [],
  );
}

describe('rules --file: a warning with a line is said at FILE:LINE', () => {
  it('iptables-save: a fence skipped, the table its rules are read as, the cut', () => {
    const file = `${PASTES}/iptables-save-kind-ext-cut.txt`;
    saysEachAt(file, ['--file', file], ['fence', 'table', 'truncated']);
  });

  it('iptables -L: the listing and what it leaves out, the table read, the cut', () => {
    const file = `${PASTES}/k8s-71305-L-n-v-kube-firewall-repeated-rules-nf-tables-segment.txt`;
    saysEachAt(file, ['--file', file], ['fence', 'table', 'truncated', 'view']);
  });

  it('nft: the lines it elides, each; the cut', () => {
    const elided = `${PASTES}/k8s-blog-nftables-service-ips-map-annotated-elided.txt`;
    saysEachAt(elided, ['--file', elided], ['elided']);
    const cut = `${PASTES}/nft-no-endpoint-services-map-fragment.txt`;
    saysEachAt(cut, ['--file', cut], ['cut-short']);
  });

  it('ipvsadm -Ln: where it is cut; its elisions, at the first', () => {
    const file = `${PASTES}/k8s-123948-ipvsadm-ln-sudo-prompt-nodeport-without-real-servers-cut.txt`;
    saysEachAt(file, ['--file', file], ['ipvs']);
    const elided = `${PASTES}/k8s-77077-ipvsadm-ln-indented-elisions-kubespray.txt`;
    saysEachAt(elided, ['--file', elided], ['ipvs']);
    assert.deepEqual(both(['--file', elided]).lined[0], {
      line: 5,
      kind: 'ipvs',
      message:
        'lines 5, 10 elide part of the listing: virtual servers not in the paste are not shown',
      lines: [5, 10],
    });
  });

  it('a line quoted from the paste shows its control characters escaped (nft, Cilium)', () => {
    // a control sequence that is no colour code (those, grep --color's, are removed before reading)
    const nft =
      'table ip kube-proxy {\n\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n\t\telements = { 10.96.0.10 udp 53 \x1b[2J: goto service-FY5PMXPG-kube-system/kube-dns/udp/dns }\n\t}\n}\n';
    const cilium =
      'ID   Frontend        Backend\n1    10.96.0.1:443   1 => 10.0.0.1:6443\nerror parsing frontend &{IP:<nil> \x1b[2JPort:9093}\n';
    for (const [input, kind] of [
      [nft, 'unread'],
      [cilium, 'cilium'],
    ] as const) {
      const { said, lined } = both(['--file', '-'], input);
      const w = lined.find((x) => x.kind === kind)!;
      assert.match(w.message, /\\x1b\[2J/);
      assert.ok(!w.message.includes('\x1b'), w.message);
      assert.ok(said.includes(`warning: <stdin>:${w.line}: ${w.message}`), said.join('\n'));
    }
  });

  it('Cilium: rows left out, and where another command starts (read from stdin)', () => {
    const file = `${PASTES}/cilium-docs-cilium-dbg-service-list-misaligned.txt`;
    saysEachAt(file, ['--file', file], ['cilium']);
    const input = `${readFileSync(file, 'utf8')}\n# cilium status\n1 agent OK\n`;
    const { said } = both(['--file', '-'], input);
    assert.ok(
      said.some((l) => /^warning: <stdin>:\d+: another command's output starts here;/.test(l)),
      said.join('\n'),
    );
  });
});
