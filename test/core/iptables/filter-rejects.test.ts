// `iptables-save | grep 443`: kube-proxy's filter REJECT rules for Services without endpoints
// beside nat's endpoint rules, neither table's *table line kept. Rules as kube-proxy writes them
// (pkg/proxy/iptables: "ns/svc:port has no endpoints" in filter KUBE-SERVICES, DNAT in KUBE-SEP).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';

const REJECT = (ip: string, name: string) =>
  `-A KUBE-SERVICES -d ${ip}/32 -p tcp -m comment --comment "${name} has no endpoints" -m tcp --dport 443 -j REJECT --reject-with icmp-port-unreachable`;
const SEP =
  '-A KUBE-SEP-223KLBGHH3GIBFEC -p tcp -m comment --comment "ns/op:https" -m tcp -j DNAT --to-destination 10.128.0.17:8443';

const read = (text: string) => {
  const x = readPaste(text, { file: 'p.txt' });
  assert.ok(x.mode === 'iptables');
  return x;
};

describe("filter's REJECT rules grep'ed with nat's, no *table line", () => {
  it('reads the REJECTs in the filter table, each a Service without endpoints', () => {
    const x = read(
      [REJECT('172.30.70.227', 'ns/webhook:https'), REJECT('172.30.199.52', 'ns/other'), SEP].join(
        '\n',
      ),
    );
    assert.deepEqual(x.dump.tables.map((t) => t.name).sort(), ['filter', 'nat']);
    assert.equal(x.dump.table('filter')!.chain('KUBE-SERVICES')!.ruleCount, 2);
    assert.equal(x.dump.table('nat')!.chain('KUBE-SERVICES'), undefined);
    // the KUBE-SEP chain: an endpoint of the Service port its comment names, no cluster IP known
    assert.deepEqual(x.trees.services.map((t) => [t.name, t.clusterIP]).sort(), [
      ['ns/op:https', undefined],
      ['ns/other', '172.30.199.52'],
      ['ns/webhook:https', '172.30.70.227'],
    ]);
    assert.ok(
      x.dump.warnings.some((w) =>
        /read as the filter table \(no \*filter line\).*REJECT/.test(w.message),
      ),
    );
  });

  it('leaves REJECTs alone in a paste of nothing but them (one headerless table, as before)', () => {
    const x = read(
      [REJECT('172.30.70.227', 'ns/webhook:https'), REJECT('172.30.199.52', 'ns/other')].join('\n'),
    );
    assert.deepEqual(
      x.dump.tables.map((t) => t.name),
      ['filter'],
    );
    assert.ok(!x.dump.warnings.some((w) => /iptables takes no REJECT in nat/.test(w.message)));
  });
});
