// Markdown emphasis typed around a pasted line ("**TCP  195.xxx8:8080 rr**", metallb#490): the
// author's bold, not the tool's output. Every reader reads the line without the marks, and says so.
// Service CIDR 10.96.0.0/16, Pods 10.244.0.0/16, node 192.168.0.10.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { unquoted } from '../../../src/core/dataplane/iptables/read/paste/mangled/quoted.js';
import { rulesDoc, rulesText } from '../../../src/output/rules.js';

const SEP = 'KUBE-SEP-FNO4E6JYD7EGUHTP';
const SVC = 'KUBE-SVC-ELCM5PCEQWBTUJ2I';
const SAVE = (dnat: string) =>
  [
    '*nat',
    ':KUBE-SERVICES - [0:0]',
    `:${SVC} - [0:0]`,
    `:${SEP} - [0:0]`,
    `-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j ${SVC}`,
    `-A ${SVC} -m comment --comment "default/web:http" -j ${SEP}`,
    `-A ${SEP} -s 10.244.1.7/32 -m comment --comment "default/web:http" -j KUBE-MARK-MASQ`,
    dnat,
    'COMMIT',
  ].join('\n');
const DNAT = `-A ${SEP} -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination 10.244.1.7:80`;

const IPVS = [
  'real ip present in table, but not work',
  '```',
  '# ipvsadm -L -n',
  'IP Virtual Server version 1.2.1 (size=4096)',
  'Prot LocalAddress:Port Scheduler Flags',
  '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
  'TCP  192.168.0.10:30445 rr',
  '  -> 10.244.3.46:80                Masq    1      0          0',
  '**TCP  192.0.2.8:8080 rr**',
  '  -> 10.244.3.46:80                Masq    1      0          0',
  '```',
].join('\n');

describe('markdown emphasis around a pasted line', () => {
  it('iptables-save: a bold rule inside its table is the rule (not a line before COMMIT)', () => {
    for (const mark of ['**', '__', '*', '***']) {
      const got = readPaste(SAVE(`${mark}${DNAT}${mark}`), { file: 'p.txt' });
      assert.ok(got.mode === 'iptables', got.mode);
      const text = rulesText(got.dump, got.trees, { label: 'p', file: 'p.txt' });
      const [ep] = got.trees.services[0]!.endpoints;
      assert.equal(ep?.address, '10.244.1.7:80', text);
      assert.match(
        text,
        new RegExp(
          `p.txt:8: line 8 is wrapped in markdown emphasis \\("\\${mark.split('').join('\\')}" before`,
        ),
      );
    }
  });

  it('ipvsadm -Ln: a bold virtual server is read with its real server (no repeat), and said', () => {
    const got = readPaste(IPVS, { file: 'p.txt' });
    assert.ok(got.mode === 'ipvs', got.mode);
    const text = rulesText(got.dump, got.trees, { label: 'p', file: 'p.txt' });
    const tree = got.trees.services.find((t) => t.entries.some((e) => e.address === '192.0.2.8'));
    assert.deepEqual(
      tree?.endpoints.map((e) => e.address),
      ['10.244.3.46:80'],
      text,
    );
    assert.doesNotMatch(text, /repeat/);
    assert.match(text, /p.txt:9: line 9 is wrapped in markdown emphasis/);
  });

  it('ipvsadm -Ln in JSON: the lines around the listing are among its warnings, not on stderr alone', () => {
    const got = readPaste(IPVS, { file: 'p.txt' });
    assert.ok(got.mode === 'ipvs');
    const doc = rulesDoc(got.dump, got.trees, { label: 'p' }) as {
      warnings: { kind: string; lines?: number[] }[];
    };
    const skipped = doc.warnings.find((w) => w.kind === 'skipped');
    assert.deepEqual(skipped?.lines, [1, 2, 3, 11]);
    // text says them on stderr, as it reads: not twice
    assert.doesNotMatch(rulesText(got.dump, got.trees, { label: 'p' }), /not part of an ipvsadm/);
  });

  it('is read off for every reader, only where the line without it is a listing line', () => {
    const cilium = unquoted('**10.0.0.2:80:TCP   NodePort       1 => 172.29.0.3:80 (active)**');
    assert.equal(cilium.text, '10.0.0.2:80:TCP   NodePort       1 => 172.29.0.3:80 (active)');
    assert.deepEqual(cilium.quote?.lines, [1]);
    // a save line that starts with "*" keeps it; prose in bold stays prose
    assert.equal(unquoted('*nat\n:KUBE-SERVICES - [0:0]').quote, undefined);
    assert.equal(unquoted('**Node 1 NAT:**').quote, undefined);
    assert.equal(unquoted('** -A KUBE-SERVICES -j X **').quote, undefined);
  });

  it('emphasis opened on one line and closed on a later one (sealos#617): each line read without the marks, and said', () => {
    const lines = IPVS.split('\n');
    // "**" before the virtual server, "**" after its real server's row (the blanks ipvsadm pads with after it)
    lines[8] = '**TCP  192.0.2.8:8080 rr';
    lines[9] = '  -> 10.244.3.46:80                Masq    1      0          0**         ';
    const got = readPaste(lines.join('\n'), { file: 'p.txt' });
    assert.ok(got.mode === 'ipvs', got.mode);
    const text = rulesText(got.dump, got.trees, { label: 'p', file: 'p.txt' });
    const tree = got.trees.services.find((t) => t.entries.some((e) => e.address === '192.0.2.8'));
    assert.deepEqual(
      tree?.endpoints.map((e) => e.address),
      ['10.244.3.46:80'],
      text,
    );
    assert.match(
      text,
      /lines 9-10 are wrapped in markdown emphasis \("\*\*" at the start of line 9/,
    );
    // only where every line the marks span is a listing's: prose in between keeps them
    assert.equal(
      unquoted('**TCP  192.0.2.8:8080 rr\nsee this\n  -> 10.244.3.46:80  Masq 1 0 0**').quote,
      undefined,
    );
    // a save's rules the same way
    const save = unquoted(`**${DNAT}\n-A ${SEP} -s 10.244.1.7/32 -j KUBE-MARK-MASQ**`);
    assert.equal(save.text, `${DNAT}\n-A ${SEP} -s 10.244.1.7/32 -j KUBE-MARK-MASQ`);
    assert.deepEqual(save.quote?.lines, [1, 2]);
  });
});
