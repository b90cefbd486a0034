// What a Cilium paste holds that kdebug does not read is said, with what it is, at its line:
// columns no release's printer writes, other tools' output beside the listing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';

describe("cilium service list with columns after Backend (a build's own)", () => {
  const listing =
    'ID   Frontend            Service Type   Backend                       Zone    Weight\n' +
    '1    10.96.0.1:443/TCP   ClusterIP      1 => 172.18.0.2:6443/TCP (active)   a       1\n';

  it('reads the frontend and says those columns are not read, at the header', () => {
    const t = parseCilium(listing, 'p.txt');
    assert.deepEqual(
      t.frontends.map((f) => f.backends.map((b) => `${b.ip}:${b.port}`)),
      [['172.18.0.2:6443']],
    );
    assert.equal(t.notRead?.length, 1);
    assert.equal(t.notRead![0]!.line, 1);
    assert.match(t.notRead![0]!.reason, /columns "Zone", "Weight" after Backend.* not read/);
  });

  it('says nothing where the header ends at Backend', () => {
    const plain = listing.replace(/\s+Zone\s+Weight/, '').replace(/\s+a\s+1$/m, '');
    assert.equal(parseCilium(plain, 'p.txt').notRead, undefined);
  });
});

describe('bpftool cgroup tree pasted above a listing', () => {
  const tree =
    'CgroupPath\n' +
    'ID       AttachType      AttachFlags     Name           \n' +
    '/run/cilium/cgroupv2\n' +
    '1201     connect4                        cil_sock4_connect\n' +
    '1205     sendmsg4                        cil_sock4_sendmsg\n' +
    '\n';
  const listing =
    'ID   Frontend            Service Type   Backend\n' +
    '1    10.96.0.1:443/TCP   ClusterIP      1 => 172.18.0.2:6443/TCP (active)\n';

  it('is named at its lines, as holding no Service, and the listing read', () => {
    const t = parseCilium(tree + listing, 'p.txt');
    assert.equal(t.frontends.length, 1);
    assert.equal(t.notRead?.[0]?.line, 1);
    assert.match(
      t.notRead![0]!.reason,
      /^lines 1-5 are `bpftool cgroup tree`.*connect4, sendmsg4.*no Service/,
    );
  });
});

describe('service update and delete typed between runs of service list', () => {
  const session =
    '# cilium-dbg service list\n' +
    'ID   Frontend            Service Type   Backend\n' +
    '1    10.96.0.1:443/TCP   ClusterIP      1 => 172.18.0.2:6443/TCP (active)\n' +
    '2    10.96.0.2:80/TCP    ClusterIP      1 => 10.244.0.5:80/TCP (active)\n' +
    '# cilium-dbg service update --id 3 --frontend 10.96.0.3:80/TCP --backends 10.244.0.6:80\n' +
    'Added service with 1 backends\n' +
    '# cilium-dbg service delete 10.96.0.2:80/TCP\n' +
    'Service 2 deleted successfully\n';

  it('takes out a frontend the CLI said it deleted after the listing, and says each command', () => {
    const t = parseCilium(session, 'p.txt');
    assert.deepEqual(
      t.frontends.map((f) => `${f.ip}:${f.port}`),
      ['10.96.0.1:443'],
    );
    const said = (t.notRead ?? []).map((n) => `${n.line} ${n.reason}`);
    assert.match(
      said.find((s) => s.startsWith('7 ')) ?? '',
      /deleted 10\.96\.0\.2:80\/TCP.*not shown/,
    );
    assert.match(
      said.find((s) => s.startsWith('5 ')) ?? '',
      /service update --id 3 --frontend 10\.96\.0\.3:80\/TCP.*no listing after it/,
    );
  });

  it('says a last listing that ends in its header cut there, not another output unread', () => {
    const t = parseCilium(`${session}\n# cilium-dbg service list\nID   Frontend`, 'p.txt');
    assert.equal(t.unreadFrom, undefined);
    assert.deepEqual(
      (t.cut ?? []).map((c) => c.line),
      [11],
    );
    assert.match(t.cut![0]!.reason, /header of what `cilium-dbg service list` \(line 10\)/);
  });

  it('says what is not read from after what a command printed, not at the command', () => {
    const t = parseCilium(`${session}\n# cilium-dbg service list\nnot a listing\nat all`, 'p.txt');
    assert.equal(t.unreadFrom, 10);
  });

  it('keeps a frontend whose delete the paste holds no result of', () => {
    const t = parseCilium(session.replace('Service 2 deleted successfully\n', ''), 'p.txt');
    assert.equal(t.frontends.length, 2);
  });
});

describe('service delete by the ID service list prints in its first column', () => {
  const first =
    '$ cilium-dbg service list\n' +
    'ID   Frontend            Service Type   Backend\n' +
    '1    10.96.0.1:443       ClusterIP      1 => 172.18.0.2:6443 (active)\n' +
    '2    10.96.0.10:53       ClusterIP      1 => 10.0.1.5:53 (active)\n' +
    '                                        2 => 10.0.1.6:53 (active)\n' +
    '$ cilium-dbg service delete 2\n' +
    'Service 2 deleted successfully\n' +
    '$ cilium-dbg service list\n' +
    'ID   Frontend            Service Type   Backend\n' +
    '1    10.96.0.1:443       ClusterIP      1 => 172.18.0.2:6443 (active)\n';

  it('takes out the frontend of that ID, listed before it and not after', () => {
    const t = parseCilium(first, 'p.txt');
    assert.deepEqual(
      t.frontends.map((f) => `${f.id} ${f.ip}:${f.port}`),
      ['1 10.96.0.1:443'],
    );
    assert.match(
      t.notRead?.find((n) => n.line === 6)?.reason ?? '',
      /deleted service 2 \(10\.96\.0\.10:53\).*not shown/,
    );
  });

  // before: "listed before it and not after, is shown as listed then"; the whole run after it
  // says it is gone
  it('where no listing prints IDs, says the frontend listed only before it is not shown', () => {
    const bare = first.replace(/^ID {3}|^(?:1|2|\s) {4}/gm, '');
    const t = parseCilium(bare, 'p.txt');
    assert.ok(t.frontends.every((f) => f.id === undefined));
    assert.match(
      t.notRead?.find((n) => n.line === 6)?.reason ?? '',
      /print no service IDs, so which frontend is ID 2 is not known: 10\.96\.0\.10:53 \(line 4\), which the listing run again after it no longer lists, is not shown$/,
    );
  });
});

describe('cilium-dbg service list rows without backend states', () => {
  const rows =
    'ID   Frontend            Service Type   Backend\n' +
    '1    10.96.0.1:443/TCP   ClusterIP      1 => 172.18.0.2:6443/TCP\n' +
    '                                        2 => 172.18.0.3:6443/TCP\n';

  it('under cilium-dbg (every release prints a state) are said to have had theirs taken out', () => {
    const t = parseCilium(`$ kubectl exec ds/cilium -- cilium-dbg service list\n${rows}`, 'p.txt');
    assert.equal(t.frontends[0]!.backends.length, 2);
    assert.match(t.notRead?.[0]?.reason ?? '', /^cilium-dbg .*carry none, taken out/);
    assert.equal(t.notRead![0]!.line, 2);
  });

  it('under cilium (a release before states, or one with them) say nothing of it', () => {
    const t = parseCilium(`$ cilium service list\n${rows}`, 'p.txt');
    assert.equal(t.notRead, undefined);
  });
});
