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

describe('IPVS: the same listing run again over time (repeated samples)', () => {
  // `ipvsadm -Ln --stats` run again after traffic: the same virtual servers, counters grown
  const later = STATS.map((l) =>
    l
      .replace('   10       60        0     3960', '   16       96        0     6336')
      .replace('    5       30        0     1980', '    8       48        0     3168'),
  );

  it('a later sample is no repeat: the rows it prints again are samples, the later read', () => {
    const t = parseIpvs([...STATS, ...later].join('\n') + '\n');
    assert.deepEqual(t.duplicates, []);
    assert.deepEqual(t.samples, [12, 13, 14, 15, 16]);
    assert.deepEqual(
      t.services.map((s) => [s.address, s.realServers.map((r) => r.address)]),
      [
        ['1.2.3.4:80', ['172.80.0.2:80', '172.80.0.3:80']],
        ['1.2.3.9:80', ['172.80.0.9:80']],
      ],
    );
  });

  it('a real server the later sample no longer lists is gone: the later sample is kept', () => {
    const gone = later.filter((l) => !l.includes('172.80.0.3:80'));
    const t = parseIpvs([...STATS, ...gone].join('\n') + '\n');
    assert.deepEqual(
      t.services.find((s) => s.address === '1.2.3.4:80')!.realServers.map((r) => r.address),
      ['172.80.0.2:80'],
    );
  });

  it('the same counts after a prompt or a log line: ipvsadm run again, not lines pasted twice', () => {
    const t = parseIpvs(
      [...STATS, '21:23:48 - INFO: Generating HTTP traffic', ...STATS].join('\n') + '\n',
    );
    assert.deepEqual([t.duplicates, t.samples], [[], [13, 14, 15, 16, 17]]);
  });

  it("labels naming hosts (a loop's echo) are another node's listing; words like 'After:' are not", () => {
    const nodes = parseIpvs(['>>> node-1', ...STATS, '>>> node-2', ...later].join('\n') + '\n');
    assert.match(nodes.samplesBy ?? '', /^host node-2 /);
    const prose = parseIpvs(['Before:', ...STATS, 'After:', ...later].join('\n') + '\n');
    assert.deepEqual([prose.samples?.length, prose.samplesBy], [5, undefined]);
  });

  it('weights an -Ln listing gave stay with a later --stats sample; a later -Ln sample gives its own', () => {
    const reweighted = LIST.map((l) =>
      l.replace('Masq    3      0          0', 'Masq    1      0          0'),
    );
    const t = parseIpvs(
      [...STATS, ...LIST, '$ ipvsadm -Ln --stats', ...later, '$ ipvsadm -Ln', ...reweighted].join(
        '\n',
      ) + '\n',
    );
    const vs = t.services.find((s) => s.address === '1.2.3.4:80')!;
    assert.deepEqual(
      vs.realServers.map((r) => r.weight),
      [1, 1],
    );
    assert.deepEqual(t.duplicates, []);
  });
});
