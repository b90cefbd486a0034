// A real server's row pasted without the columns ipvsadm -L prints after its address (Forward,
// Weight, ActiveConn, InActConn: print_service_entry prints all four on every row): the real
// server is read, its weight not in the paste, so no share is stated; never a weight invented.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { buildIpvsTrees } from '../../src/core/dataplane/ipvs/trees.js';

const FULL = '  -> 10.244.1.5:8080              Masq    1      0          0\n';

describe('a real server row without its columns', () => {
  it("cilium#7677's fragment: its one real server read, its weight unknown, no share", () => {
    // a kubectl describe's YAML, then "TCP  10.233.0.3:53 rr" and "  -> 10.234.5.160:53"
    const text = `  type: ClusterIP\nstatus:\n  loadBalancer: {}\n\`\`\`\n\nipvs in this machine:\n\`\`\`\nTCP  10.233.0.3:53 rr\n  -> 10.234.5.160:53\n`;
    const table = parseIpvs(text);
    const [rs] = table.services[0]!.realServers;
    assert.deepEqual(rs, { address: '10.234.5.160:53', columnsMissing: true, line: 9 });
    const [ep] = buildIpvsTrees(table).services[0]!.endpoints;
    assert.equal(ep!.address, '10.234.5.160:53');
    assert.equal(ep!.probability, 0);
    assert.ok(ep!.shareUnknown);
  });

  it('rows without columns above one with them: each read, the lines that lack them said', () => {
    const text = `TCP  10.96.0.50:80 rr\n  -> 10.244.1.6:80\n  -> 10.244.1.7:80\n${FULL}`;
    const table = parseIpvs(text);
    assert.deepEqual(
      table.services[0]!.realServers.map((r) => [r.address, r.weight, r.columnsMissing]),
      [
        ['10.244.1.6:80', undefined, true],
        ['10.244.1.7:80', undefined, true],
        ['10.244.1.5:8080', 1, undefined],
      ],
    );
    const t = buildIpvsTrees(table).services[0]!;
    assert.equal(t.partial, undefined);
    for (const ep of t.endpoints)
      assert.match(
        ep.shareUnknown ?? '',
        /^its real servers at lines 2, 3 show no columns after their addresses: their weights are not in the listing$/,
      );
  });
});
