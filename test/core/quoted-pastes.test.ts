// A listing quoted in a markdown reply ("> " before each line, "> > " for a quote of a quote, the
// replier's prose around it): every reader reads it as the unquoted listing, and says the quote.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesDoc } from '../../src/output/rules.js';
import { dumpWarnings } from '../../src/output/rules/warnings.js';

/** The text quoted as GitHub's "Quote reply" does, `depth` levels, between the replier's prose. */
const quoted = (text: string, depth = 1) =>
  `> > earlier question, quoted\n>\n${text
    .trimEnd()
    .split('\n')
    .map((l) => `${'> '.repeat(depth)}${l}`)
    .join('\n')}\n\nThanks, that shows it.\n`;

/** The paste read: its trees' services as JSON, and what its warnings say. */
function read(text: string) {
  const r = readPaste(text, { file: 'paste.txt' });
  assert.notEqual(r.mode, 'not-kube-proxy');
  if (r.mode === 'not-kube-proxy') throw new Error(r.message);
  const doc = rulesDoc(r.dump, r.trees, { label: 'paste.txt', file: 'paste.txt' });
  return { mode: r.mode, services: JSON.stringify(doc.services), said: dumpWarnings(r.dump) };
}

const PASTES: Record<string, string> = {
  iptables: `# iptables-save -t nat | grep web
-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA
-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "default/web:http -> 10.244.1.5:8080" -j KUBE-SEP-BBBBBBBBBBBBBBBB
-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.1.5:8080
`,
  ipvs: `\`\`\`
# ipvsadm -Ln
IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.20:80 rr
  -> 10.244.1.5:8080              Masq    1      0          0
\`\`\`
`,
  nftables: `table ip kube-proxy {
	chain service-AAAAAAAA-default/web/tcp/http {
		ip daddr 10.96.0.20 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade
		numgen random mod 1 vmap { 0 : goto endpoint-BBBBBBBB-default/web/tcp/http__10.244.1.5/8080 }
	}

	chain endpoint-BBBBBBBB-default/web/tcp/http__10.244.1.5/8080 {
		ip saddr 10.244.1.5 jump mark-for-masquerade
		meta l4proto tcp dnat to 10.244.1.5:8080
	}
}
`,
  cilium: `$ cilium-dbg service list
ID   Frontend         Service Type   Backend
1    10.96.0.20:80    ClusterIP      1 => 10.244.1.5:8080 (active)
`,
};

describe('a listing quoted in a markdown reply', () => {
  for (const [mode, text] of Object.entries(PASTES))
    for (const depth of [1, 2])
      it(`${mode}, "${'> '.repeat(depth)}" before each line: read as the listing, the quote said`, () => {
        // the same lines unquoted: the quoted question, a blank, the listing
        const plain = read(`earlier question, quoted\n\n${text}`);
        const got = read(quoted(text, depth));
        assert.equal(got.mode, mode);
        assert.equal(got.services, plain.services);
        assert.ok(plain.services.includes('10.244.1.5'));
        const note = got.said.find((w) => /quoted in a markdown reply/.test(w.message));
        assert.ok(note, JSON.stringify(got.said));
        assert.match(note.message, /^lines 1-\d+ are quoted/);
        assert.match(note.message, depth > 1 ? /"> > " before each, a quote of a quote/ : /"> "/);
      });

  it("lines quoted at mixed depths: each depth said where it is, not the deepest as every line's", () => {
    const rules = PASTES.iptables!.trimEnd().split('\n');
    const text = `${rules
      .slice(0, 3)
      .map((l) => `> ${l}`)
      .join('\n')}\n> > ${rules[3]}\n`;
    const note = read(`said before\n${text}`).said.find((w) => /markdown reply/.test(w.message));
    assert.match(
      note?.message ?? '',
      /^lines 2-5 are quoted in a markdown reply \("> " before each, "> > " on line 5, a quote of a quote\)/,
    );
  });

  it('a ">" prompt before a command, its output not marked, is no quote', () => {
    const got = read(`> ipvsadm -Ln\n${PASTES.ipvs!.replace(/^```\n# ipvsadm -Ln\n/, '')}`);
    assert.equal(got.mode, 'ipvs');
    assert.ok(!got.said.some((w) => /markdown reply/.test(w.message)));
  });
});
