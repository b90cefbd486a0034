// An ipvsadm listing cut mid-line or at its end (r137's repro inputs): ipvsadm ends every line
// with a newline and ipvsadm-save prints every real server with its port, forwarding and weight,
// so a last line without them is cut, never read with a default port or weight; a recorded
// listing's last line without a newline is cut whatever it holds; and a virtual server ending a
// paste has real servers the paste does not show, not none.
// IPs: Service CIDR 10.1.0.0/16, Pod CIDR 10.244.0.0/16, nodes 10.0.12.7 / 10.0.12.11.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { diagnose } from '../../src/core/diagnose.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { unavailableText } from '../../src/core/nodes/drift-unavailable.js';
import { parseIpvs } from '../../src/core/dataplane/ipvs/read/listing.js';
import { buildIpvsTrees } from '../../src/core/dataplane/ipvs/trees.js';
import { rulesText } from '../../src/output/rules.js';
import { allModes } from '../support/modes.js';

const SAVED = `-A -t 10.1.0.1:443 -s rr
-a -t 10.1.0.1:443 -r 10.0.12.7:6443 -m -w 1
-A -t 10.1.190.219:8080 -s rr
-a -t 10.1.190.219:8080 -r 10.244.0.3:80 -m -w 1
`;
/** The last line cut after its real server's address (r137's cut-ipvsadm-save.txt). */
const CUT_SAVED = `${SAVED}-a -t 10.1.190.219:8080 -r 10.244.1.8`;

const realServers = (text: string, o?: { recorded?: boolean }) =>
  parseIpvs(text, 'p.txt', o).services.map((s) => [s.address, s.realServers.map((r) => r.address)]);

describe('IPVS: a listing cut mid-line', () => {
  it('ipvsadm-save: a last real server without its port, forwarding and weight is cut, not read', () => {
    for (const text of [
      CUT_SAVED,
      `${CUT_SAVED}\n`,
      `${SAVED}-a -t 10.1.190.219:8080 -r 10.244.1.8:80 -m`,
    ]) {
      const t = parseIpvs(text, 'p.txt');
      assert.equal(t.cut, 5, text);
      assert.equal(t.cutInside, "a real server's row");
      const vs = t.services.find((s) => s.address === '10.1.190.219:8080')!;
      assert.deepEqual(
        vs.realServers.map((r) => [r.address, r.weight]),
        [['10.244.0.3:80', 1]],
      );
      assert.match(vs.partial ?? '', /cut at line 5 inside its real servers/);
    }
  });

  it('the rules tree states no DNAT to a port and no share the paste did not hold', () => {
    const t = parseIpvs(CUT_SAVED, 'p.txt');
    const text = rulesText(t, buildIpvsTrees(t), { label: 'p.txt' });
    assert.doesNotMatch(text, /10\.244\.1\.8/);
    assert.doesNotMatch(text, /50%/);
    assert.match(text, /ends mid-line at line 5, inside a real server's row/);
  });

  it('a saved real server lacking its weight above the last line is not read with a default', () => {
    const t = parseIpvs(
      `${SAVED}-a -t 10.1.190.219:8080 -r 10.244.1.8:80 -m\n-A -t 10.1.0.10:53 -s rr\n-a -t 10.1.0.10:53 -r 10.244.0.2:53 -m -w 1\n`,
    );
    const vs = t.services.find((s) => s.address === '10.1.190.219:8080')!;
    assert.deepEqual(
      vs.realServers.map((r) => r.address),
      ['10.244.0.3:80'],
    );
    assert.match(vs.partial ?? '', /real server at line 5 lacks its weight/);
    assert.equal(t.cut, undefined);
  });

  it('a saved virtual server cut inside its scheduler ("-s w" of wrr) is not read', () => {
    const t = parseIpvs(`${SAVED}-A -t 10.1.0.10:53 -s w`);
    assert.equal(t.cut, 5);
    assert.ok(!t.services.some((s) => s.address === '10.1.0.10:53'));
  });

  it('a recorded listing: the last line without its newline is cut whatever it holds; with it, read', () => {
    const whole = `${SAVED}-a -t 10.1.190.219:8080 -r 10.244.1.8:80 -m -w 1`;
    assert.deepEqual(realServers(whole, { recorded: true })[1], [
      '10.1.190.219:8080',
      ['10.244.0.3:80'],
    ]);
    assert.equal(parseIpvs(whole, 'f', { recorded: true }).cut, 5);
    assert.deepEqual(realServers(`${whole}\n`, { recorded: true })[1], [
      '10.1.190.219:8080',
      ['10.244.0.3:80', '10.244.1.8:80'],
    ]);
    // a paste's: read, and said to be perhaps cut (its weight "1" may be "10")
    const pasted = parseIpvs(whole, 'p.txt');
    assert.equal(pasted.cut, undefined);
    assert.equal(pasted.mayBeCut, 5);
    assert.match(rulesText(pasted, buildIpvsTrees(pasted), { label: 'p' }), /may be cut there/);
    assert.equal(parseIpvs(`${whole}\n`, 'p.txt').mayBeCut, undefined);
  });
});

describe('IPVS: a virtual server that ends the paste', () => {
  const P10 = `[root@10-10-40-200 ~]# ipvsadm -L -n
IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.10.40.42:8066 wlc persistent 1800
  -> 10.244.2.6:8066              Masq    1      0          0
`;

  it('cut inside its scheduler (keepalived#1028, "wl"): not read, and no "no endpoints"', () => {
    const t = parseIpvs(`${P10}TCP  10.10.40.42:9066 wl\n`, 'p10.txt');
    assert.equal(t.cut, 7);
    assert.deepEqual(
      t.services.map((s) => s.address),
      ['10.10.40.42:8066'],
    );
    assert.doesNotMatch(rulesText(t, buildIpvsTrees(t), { label: 'p10' }), /no endpoints/);
  });

  it('whole: its real servers are not in the paste, not none; a recorded listing has none', () => {
    const text = `${P10}TCP  10.10.40.42:9066 wlc persistent 1800\n`;
    const t = parseIpvs(text, 'p10.txt');
    const vs = t.services[1]!;
    assert.equal(vs.address, '10.10.40.42:9066');
    assert.match(vs.partial ?? '', /the paste ends at its row \(line 7\): its real servers/);
    assert.doesNotMatch(rulesText(t, buildIpvsTrees(t), { label: 'p10' }), /no endpoints/);
    assert.equal(parseIpvs(text, 'f', { recorded: true }).services[1]!.partial, undefined);
  });
});

describe('IPVS: a snapshot whose ipvsadm-save was cut mid-line (r137 i3)', () => {
  const cut = async () => {
    const facts = await readSnapshot('snapshots/ipvs-stale-real-server');
    const node = facts.nodes['vm-12-7-centos']!;
    // cut mid-line 5, in 10.244.1.8:80's row, as the reviewer's i3
    node['ipvsadm-save'] =
      node['ipvsadm-save']!.split('\n').slice(0, 4).join('\n') +
      '\n-a -t 10.1.190.219:8080 -r 10.244.1.8';
    return facts;
  };

  it('drift does not compare it: nothing past the cut is said missing', async () => {
    const analysis = new Analysis(await cut(), { code: allModes });
    const why = analysis.node('vm-12-7-centos').driftUnavailable();
    assert.equal(why?.kind, 'listing-cut');
    assert.match(
      unavailableText('vm-12-7-centos', why),
      /ipvsadm-save\.txt ends at line 5 inside a real server's row: the listing was cut, so it is not compared/,
    );
  });

  it('svc: the node is not compared, and no stale real server is made of the cut line', async () => {
    const r = diagnose(
      await cut(),
      { namespace: 'default', service: 'nginx-svc' },
      { code: allModes },
    );
    const on7 = r.steps
      .flatMap((s) => s.findings)
      .filter((f) => f.node === 'vm-12-7-centos' || f.title.includes('vm-12-7-centos'));
    assert.ok(
      on7.some((f) => f.id === 'rules-unreadable' && /IPVS listing is cut short/.test(f.title)),
      on7.map((f) => `${f.id} ${f.title}`).join('\n'),
    );
    assert.ok(!on7.some((f) => /10\.244\.1\.8:8080/.test(JSON.stringify(f))));
  });
});

describe('IPVS: a -Ln listing whose last real server row is short', () => {
  const HEAD = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.1.0.20:443 rr
  -> 10.244.2.9:8443              Masq    1      0          0
`;
  const text = (last: string) => {
    const t = parseIpvs(`${HEAD}${last}`, 'p.txt');
    return rulesText(t, buildIpvsTrees(t), { label: 'p' });
  };
  it('the row is read, and the warning says so (not "not read")', () => {
    const out = text('  -> 10.244.2.10:8443             Masq    1      0');
    assert.match(out, /DNAT -> 10\.244\.2\.10:8443/);
    assert.doesNotMatch(out, /that line and what came after were not read/);
    assert.match(
      out,
      /the row is read \(its address, its weight\), but its columns after ActiveConn are cut/,
    );
  });
  it('a row cut after its weight: the weight is not known', () => {
    const out = text('  -> 10.244.2.10:8443             Masq    1');
    assert.match(out, /DNAT -> 10\.244\.2\.10:8443/);
    assert.match(out, /its Weight may be short: its weight is not known/);
    assert.doesNotMatch(out, /that line and what came after were not read/);
  });
});

describe('IPVS: a -Ln listing ending without a newline after a complete row', () => {
  it('names the InActConn count as the word that may be short, and the shares stand', () => {
    const t = parseIpvs(
      `Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.1.0.20:443 wrr
  -> 10.244.2.9:8443              Masq    1      0          0
  -> 10.244.2.10:8443             Masq    1      0          0`,
      'p.txt',
    );
    const out = rulesText(t, buildIpvsTrees(t), { label: 'p' });
    assert.match(out, /its last word, the InActConn count, short/);
    assert.doesNotMatch(out, /a weight "1" of "10"/);
    assert.match(out, /50%/);
  });
});
