// kube-proxy chain names whose hash a paste's author hid by hand, in some places and not others.
// The dump is kube-proxy 1.37's own iptables test output (pkg/proxy/iptables TestTracePacket, as
// test/fixtures/packet-flows records it): Services ns1/svc1 .. ns6/svc6 port p80, ns5/svc5 a
// load balancer (5.6.7.8, source ranges) with KUBE-SVC/EXT/FW and one KUBE-SEP.
// IP conventions: Pods 10.180.0.0/16 (10.0.0.0/8 the cluster CIDR), Services 172.30.0.0/16,
// node 192.168.0.2, external and load-balancer IPs 192.168.99.0/24, 1.2.3.4, 5.6.7.8.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import type { ServiceTrees } from '../../src/core/dataplane/trees.js';
import { rulesText } from '../../src/output/rules.js';

const dump = readFileSync(
  new URL('../fixtures/packet-flows/1.37/iptables/TestTracePacket.rules', import.meta.url),
  'utf8',
);
const SVC5 = 'NUKIZ6OKUXPJNT4C'; // ns5/svc5:p80's hash (its SVC, EXT and FW chains)
const SEP5 = 'I77PXRDZVX7PMWMN'; // its one endpoint's, 10.180.0.3:80

const reads = (text: string) => {
  const x = readPaste(text, { file: 'p.txt' });
  assert.ok(x.mode === 'iptables');
  return x;
};
const whole = reads(dump);

/** The trees as a reader compares them: every field but the lines a paste's rules are on. */
const shape = (t: ServiceTrees) => JSON.parse(JSON.stringify(t)) as unknown;

/** Authors' ways of hiding a hash. */
const FORMS = ['XXXXXXXXXXXXXXXX', 'xxxx', '<hash>', '***', '...'];

describe("a chain name whose hash the paste's author hid is the chain kube-proxy named", () => {
  it('hidden in the jumps and the filter comment, not in the chains: one tree per Service port, as with the hashes', () => {
    for (const hidden of FORMS) {
      const text = dump
        .replace(new RegExp(` -j KUBE-(SVC|EXT|FW)-${SVC5}`, 'g'), ` -j KUBE-$1-${hidden}`)
        .replace(` -j KUBE-SEP-${SEP5}`, ` -j KUBE-SEP-${hidden}`)
        .replace(
          `traffic not accepted by KUBE-FW-${SVC5}`,
          `traffic not accepted by KUBE-FW-${hidden}`,
        );
      assert.notEqual(text, dump);
      const x = reads(text);
      assert.deepEqual(shape(x.trees), shape(whole.trees), hidden);
      const note = x.dump.warnings.find((w) => w.kind === 'view')!;
      assert.match(
        note.message,
        new RegExp(`KUBE-SVC-${hidden.replace(/[.*<>]/g, '\\$&')} as KUBE-SVC-${SVC5}`),
        hidden,
      );
      assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /orphan chains \(/, hidden);
      // hidden in the filter's comment alone: its DROP is still ns5/svc5's
      const comment = reads(dump.replace(`by KUBE-FW-${SVC5}`, `by KUBE-FW-${hidden}`));
      const ids = (t: ServiceTrees) => t.services.map((s) => s.id);
      assert.deepEqual(ids(comment.trees), ids(whole.trees), hidden);
      const svc5 = comment.trees.services.find((s) => s.name === 'ns5/svc5:p80')!;
      assert.deepEqual(
        svc5.verdicts.map((v) => [v.kind, v.chain, v.address]),
        [['drop', 'KUBE-PROXY-FIREWALL', '5.6.7.8']],
        hidden,
      );
    }
  });

  it('hidden in the chains (declared and listed) and not in the jumps: the same', () => {
    for (const hidden of FORMS) {
      const text = dump
        .replace(new RegExp(`^(:|-A )KUBE-(SVC|EXT|FW)-${SVC5}`, 'gm'), `$1KUBE-$2-${hidden}`)
        .replace(new RegExp(`^(:|-A )KUBE-SEP-${SEP5}`, 'gm'), `$1KUBE-SEP-${hidden}`);
      const x = reads(text);
      assert.deepEqual(shape(x.trees), shape(whole.trees), hidden);
    }
  });

  it('every hash hidden alike: each Service port still one tree with its endpoints, and a line that cannot say which chain it is said', () => {
    const text = dump.replace(
      /\b(KUBE-(?:SVC|SVL|EXT|FW|SEP)-)[A-Z0-9]{16}\b/g,
      '$1XXXXXXXXXXXXXXXX',
    );
    const x = reads(text);
    const endpoints = (t: ServiceTrees) =>
      t.services.map((s) => [s.name, s.clusterIP, s.endpoints.map((e) => e.address)]);
    assert.deepEqual(endpoints(x.trees), endpoints(whole.trees));
    // "-A KUBE-EXT-… -j KUBE-SVC-…" carries no comment: which Service's it is, is not in the paste
    const unread = x.dump.warnings.filter((w) => w.kind === 'redacted');
    assert.ok(unread.length > 0);
    assert.ok(unread.every((w) => /its hash is hidden: it stands for \d+ chains/.test(w.message)));
  });

  it('two chains hidden alike that no line tells apart: said, and no share claimed for either', () => {
    // kube-proxy's jumps to endpoints without comments (over 1,000 endpoints), their chains hidden
    const text = dump
      .replace(
        /^(-A KUBE-SVC-4SW47YFZTEDKD3PK) -m comment --comment "[^"]*" (-m statistic|-j)/gm,
        '$1 $2',
      )
      .replace(/KUBE-SEP-(?:UKSFD7AGPMPPLUHC|C6EBXVWJJZMIWKLZ)/g, 'KUBE-SEP-XXXXXXXXXXXXXXXX');
    const x = reads(text);
    const svc4 = x.trees.services.find((t) => t.name === 'ns4/svc4:p80')!;
    assert.match(
      svc4.partial ?? '',
      /KUBE-SEP-XXXXXXXXXXXXXXXX, whose hash is hidden: it stands for 2 chains/,
    );
    assert.ok(svc4.endpoints.every((e) => e.shareUnknown !== undefined));
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /100%.*KUBE-SEP-XXXX/);
  });
});

describe('a hidden name its own line does not tie to one chain', () => {
  it('two jumps hidden alike, their comments without an endpoint, one chain of that name pasted: neither jump claimed as it', () => {
    const svc = 'KUBE-SVC-XXXXXXXXXXXXXXXX';
    const sep = 'KUBE-SEP-XXXXXXXXXXXXXXXX';
    const text = [
      '*nat',
      `:${sep} - [0:0]`,
      `-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${svc}`,
      `-A ${svc} -m comment --comment default/web:http -m statistic --mode random --probability 0.50000000000 -j ${sep}`,
      `-A ${svc} -m comment --comment default/web:http -j ${sep}`,
      `-A ${sep} -s 10.244.1.2/32 -m comment --comment default/web:http -j KUBE-MARK-MASQ`,
      `-A ${sep} -p tcp -m comment --comment default/web:http -m tcp -j DNAT --to-destination 10.244.1.2:80`,
      'COMMIT',
    ].join('\n');
    const x = reads(text);
    const web = x.trees.services.find((t) => t.name === 'default/web:http')!;
    assert.match(web.partial ?? '', new RegExp(`a jump of it names ${sep}, whose hash is hidden`));
    assert.ok(web.endpoints.length > 0);
    assert.ok(web.endpoints.every((e) => e.shareUnknown !== undefined));
    const unread = x.dump.warnings.find((w) => w.kind === 'redacted')!;
    assert.deepEqual(unread.lines, [4, 5]);
    assert.doesNotMatch(rulesText(x.dump, x.trees, { label: 'p' }), /100%/);
  });
});
