// One paste holding `ipvsadm -Ln --stats` (or --rate) and `ipvsadm -Ln` of the same virtual
// server: the -Ln lines are a second view of it, not a repeat; a server only a counter view
// lists is the one whose weights that view does not show.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { buildIpvsTrees } from '../../src/core/dataplane/ipvs/trees.js';

const STATS = [
  'IP Virtual Server version 1.2.1 (size=4096)',
  'Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes',
  '  -> RemoteAddress:Port',
  'TCP  1.2.3.4:80                         10       60        0     3960        0',
  '  -> 172.80.0.2:80                       5       30        0     1980        0',
  '  -> 172.80.0.3:80                       5       30        0     1980        0',
  'TCP  1.2.3.9:80                          1        6        0      396        0',
  '  -> 172.80.0.9:80                       1        6        0      396        0',
];
const LIST = [
  'IP Virtual Server version 1.2.1 (size=4096)',
  'Prot LocalAddress:Port Scheduler Flags',
  '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
  'TCP  1.2.3.4:80 wrr',
  '  -> 172.80.0.2:80                Masq    3      0          0',
  '  -> 172.80.0.3:80                Masq    1      0          0',
];

describe('IPVS: a paste with a counter view and -Ln of one virtual server', () => {
  it('reads the -Ln lines as a second view, not as lines pasted twice', () => {
    const t = parseIpvs([...STATS, ...LIST].join('\n') + '\n');
    assert.deepEqual(t.duplicates, []);
    const vs = t.services.find((s) => s.address === '1.2.3.4:80')!;
    assert.deepEqual(
      vs.realServers.map((r) => r.weight),
      [3, 1],
    );
  });

  it('a counter view printed again is still a repeat', () => {
    const t = parseIpvs([...STATS, ...LIST, ...STATS].join('\n') + '\n');
    assert.deepEqual(t.duplicates, [18, 19, 20, 21, 22]);
  });

  it('says "--stats shows no weights" only of the server no -Ln view lists', () => {
    const trees = buildIpvsTrees(parseIpvs([...STATS, ...LIST].join('\n') + '\n'));
    const unknown = (vs: string) =>
      trees.services.find((s) => s.id.endsWith(vs))!.endpoints.map((e) => e.shareUnknown);
    assert.deepEqual(unknown('1.2.3.4:80'), [undefined, undefined]);
    assert.deepEqual(unknown('1.2.3.9:80'), ['ipvsadm --stats shows no weights']);
  });
});
