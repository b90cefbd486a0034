// A DNAT target whose address its author hid ("<IP>:8080", "x.x.x.x:80", "10.244.x.x:8080"):
// iptables prints every address in numbers, so it is no address the node holds: the rule is not
// read, said hidden by hand as an -s or -d hidden so is, and the endpoint's DNAT target is not
// stated; in an `iptables -L` row ("to:<IP>:8080") it is no print cut short.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const save = (to: string) =>
  [
    '-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-AAAAAAAAAAAAAAAA',
    '-A KUBE-SVC-AAAAAAAAAAAAAAAA -m comment --comment "ns/a:http" -j KUBE-SEP-BBBBBBBBBBBBBBBB',
    `-A KUBE-SEP-BBBBBBBBBBBBBBBB -p tcp -m comment --comment "ns/a:http" -m tcp -j DNAT --to-destination ${to}`,
  ].join('\n');

describe('a DNAT target hidden by hand', () => {
  // (an IPv6 one hidden so, in an ip6tables-save: the pastes corpus, calico-3835)
  for (const to of ['<IP>:8080', 'x.x.x.x:8080', '10.244.x.x:8080', '<pod-ip>:8080'])
    it(`--to-destination ${to}: not read, said hidden; no DNAT target stated`, () => {
      const got = readPaste(save(to), { file: 'p.txt' });
      assert.ok(got.mode === 'iptables');
      const text = rulesText(got.dump, got.trees, { label: 'paste' });
      assert.ok(
        got.dump.warnings.some((w) => w.message.includes(`"${to}" was hidden by hand`)),
        text,
      );
      const [ep] = got.trees.services.find((t) => t.name === 'ns/a:http')!.endpoints;
      assert.equal(ep?.address, undefined, text);
      assert.match(text, /DNAT target not in the paste \(its chain: .*hidden\)/);
      assert.doesNotMatch(text, new RegExp(`DNAT -> ${to}`));
    });

  it('an address that is one is read as ever', () => {
    const got = readPaste(save('10.244.1.5:8080'), { file: 'p.txt' });
    assert.ok(got.mode === 'iptables');
    assert.equal(got.trees.services[0]!.endpoints[0]!.address, '10.244.1.5:8080');
  });

  it('`iptables -L`: "to:<IP>:8080" on the last row is no cut', () => {
    const got = readPaste(
      [
        'Chain KUBE-SEP-BBBBBBBBBBBBBBBB (1 references)',
        'target     prot opt source               destination',
        'DNAT       tcp  --  0.0.0.0/0            0.0.0.0/0            /* ns/a:http */ tcp to:<IP>:8080',
      ].join('\n'),
      { file: 'p.txt' },
    );
    assert.ok(got.mode === 'iptables');
    const said = got.dump.warnings.map((w) => w.message).join('\n');
    assert.doesNotMatch(said, /cut/);
    assert.match(said, /"<IP>:8080" was hidden by hand/);
  });
});
