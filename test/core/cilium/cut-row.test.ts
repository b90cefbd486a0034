// A listing whose paste ends inside its last row (a page's copy stopping mid-address, a terminal
// cut): the rows before it are read, that row is said not read; where it may be one more row of
// the frontend above, that frontend's backends are said to be possibly more. A row that does not
// read anywhere else is still an error at its line. A row is whole only where every column its
// printer writes is there and closed; a fence, a prompt or prose after it ends the listing too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';

const LIST =
  'ID   Frontend              Service Type   Backend\n' +
  '2    10.96.0.10:53/TCP     ClusterIP      1 => 10.244.1.69:53/TCP (active)\n' +
  '                                          2 => 10.244.1.109:53/TCP (active)\n';

const BPF =
  'SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
  '10.96.155.44:80     0.0.0.0:0 (14) (0) [ClusterIP, non-routable]\n' +
  '                    10.244.1.211:80 (14) (1)\n';

describe('a Cilium listing cut inside its last row', () => {
  it('service list: a new frontend cut short leaves the one above whole', () => {
    const t = parseCilium(
      `${LIST}3    10.96.0.10:53/UDP     ClusterIP      1 => 10.244.1.69:53/U\n`,
      'p',
    );
    assert.equal(t.frontends.length, 1);
    assert.equal(t.frontends[0]!.backends.length, 2);
    assert.equal(t.frontends[0]!.backendsElided, undefined);
    assert.deepEqual(
      t.cut?.map((c) => c.line),
      [4],
    );
  });

  it('service list: a backend row cut short says the frontend above may have more', () => {
    const t = parseCilium(`${LIST}                                          3 => 10.244.1.1`, 'p');
    assert.equal(t.frontends[0]!.backends.length, 2);
    assert.equal(t.frontends[0]!.backendsElided, 4);
  });

  it('bpf lb list: an address alone at the end is cut, not a backend of the Service above', () => {
    const t = parseCilium(`${BPF}10.96.122.5:80\n`, 'p');
    assert.deepEqual(
      t.frontends[0]!.backends.map((b) => b.ip),
      ['10.244.1.211'],
    );
    assert.equal(t.frontends[0]!.backendsElided, undefined);
    assert.match(t.cut?.[0]?.reason ?? '', /ends inside a row \("10\.96\.122\.5:80"\)/);
  });

  it('bpf lb list: an indented row cut short may be one more of the Service above', () => {
    const t = parseCilium(`${BPF}                    10.244.1.2`, 'p');
    assert.equal(t.frontends[0]!.backendsElided, 4);
  });

  // a row cut inside a column still parses: whole only where every column its printer writes
  // (cilium-dbg/cmd/service_list.go, bpf_lb_list.go) is there and closed
  it('service list: a last line cut mid-port, no newline after it, is no backend', () => {
    const t = parseCilium(
      `${LIST}                                          3 => 10.244.1.109:5`,
      'p',
    );
    assert.equal(t.frontends[0]!.backends.length, 2);
    assert.equal(t.frontends[0]!.backendsElided, 4);
  });

  it('service list: a backend without the state its release prints is cut short', () => {
    const t = parseCilium(
      `${LIST}                                          3 => 10.244.1.109:53\n`,
      'p',
    );
    assert.equal(t.frontends[0]!.backends.length, 2);
    assert.equal(t.frontends[0]!.backendsElided, 4);
  });

  // a row whose line ends inside its Service Type column: "Cl", "Cluster", "NodePor" are words
  // service list never prints (it writes the type's whole name)
  for (const word of ['Cl', 'Cluster', 'NodePor']) {
    it(`service list: a row cut inside its Service Type ("${word}") is cut, not read`, () => {
      const t = parseCilium(`${LIST}3    10.96.0.11:53       ${word}\n`, 'p');
      assert.deepEqual(
        t.frontends.map((f) => f.ip),
        ['10.96.0.10'],
      );
      assert.match(t.cut?.[0]?.reason ?? '', /ends inside a row \("3 +10\.96\.0\.11:53 +\w+"\)/);
    });
  }

  const ROWS =
    'SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
    '10.96.155.44:80     0.0.0.0:0 (14) (0) [ClusterIP, non-routable]\n' +
    '10.96.155.44:80     10.244.1.211:80 (14) (1)\n';
  for (const [what, row] of [
    ['cut inside its slot', '10.96.155.44:80     10.244.1.212:80 (14) (2\n'],
    ['without the slot its release prints', '10.96.155.44:80     10.244.1.212:80 (14)\n'],
  ] as const)
    it(`bpf lb list, the Service's address on every row: a row ${what} is no backend`, () => {
      const t = parseCilium(`${ROWS}${row}`, 'p');
      assert.deepEqual(
        t.frontends[0]!.backends.map((b) => b.ip),
        ['10.244.1.211'],
      );
      assert.equal(t.frontends[0]!.backendsElided, 4);
    });

  it('bpf lb list: a Service entry without the flags its release prints is cut short', () => {
    const t = parseCilium(`${BPF}10.96.0.1:443       0.0.0.0:0 (2) (0)\n`, 'p');
    assert.equal(t.frontends.length, 1);
    assert.equal(t.cut?.[0]?.line, 4);
  });

  // service_list.go writes a state after each backend only from the release that added it; the
  // older ones end a backend's row at its address (cilium#1185's v1.8 docs, the v1.5 cheat sheet)
  const STATELESS =
    'ID   Frontend              Service Type   Backend\n' +
    '2    10.96.0.10:53         ClusterIP      1 => 10.244.1.69:53\n';
  it('service list of a release without states: a last row at its address, no newline, is whole', () => {
    const t = parseCilium(
      `${STATELESS}                                          2 => 10.244.1.109:53`,
      'p',
    );
    assert.deepEqual(
      t.frontends[0]!.backends.map((b) => `${b.ip}:${b.port}`),
      ['10.244.1.69:53', '10.244.1.109:53'],
    );
    assert.equal(t.cut, undefined);
    assert.equal(t.frontends[0]!.backendsElided, undefined);
  });

  it('service list: a last frontend without backends ends at its Service Type, whole', () => {
    const t = parseCilium(`${LIST}7    192.168.60.179:443/TCP   ClusterIP`, 'p');
    assert.deepEqual(
      t.frontends.map((f) => [f.ip, f.type, f.backends.length]),
      [
        ['10.96.0.10', 'ClusterIP', 2],
        ['192.168.60.179', 'ClusterIP', 0],
      ],
    );
    assert.equal(t.cut, undefined);
  });

  it('service list printing protocols, no states: a last address without its protocol is cut', () => {
    const withProtocol = STATELESS.replace('10.244.1.69:53', '10.244.1.69:53/UDP');
    const t = parseCilium(
      `${withProtocol}                                          2 => 10.244.1.109:53`,
      'p',
    );
    assert.equal(t.frontends[0]!.backends.length, 1);
    assert.equal(t.frontends[0]!.backendsElided, 3);
  });

  it('service list: no row above shows whether the release prints states, the last row is cut', () => {
    const only = `${STATELESS.split('\n')[0]}\n2    10.96.0.10:53         ClusterIP      1 => 10.244.1.69:53`;
    const t = parseCilium(only, 'p');
    assert.equal(t.frontends.length, 0);
    assert.equal(t.cut?.[0]?.line, 2);
  });

  it('a whole last row without a newline after it is read', () => {
    const t = parseCilium(`${BPF}                    10.244.1.212:80 (14) (2)`, 'p');
    assert.equal(t.frontends[0]!.backends.length, 2);
    assert.equal(t.cut, undefined);
  });

  // the listing's end is the paste's: a fence, the next prompt, prose, another command
  for (const [what, after] of [
    ['a closing fence', '\n```\n'],
    ['the next prompt', '\nroot@kind-control-plane:/home/cilium# exit\n'],
    ['prose', '\nI think the problem is here\n'],
  ] as const)
    it(`a row cut short, then ${what}: the rows before it read, it not`, () => {
      const t = parseCilium(
        `\`\`\`\n${LIST}16   10.96.55.103:80/TCP   ClusterIP      1 => 10.244.1.67:80/TC\n${after}`,
        'p',
      );
      assert.equal(t.frontends.length, 1);
      assert.equal(t.frontends[0]!.backends.length, 2);
      assert.match(t.cut?.[0]?.reason ?? '', /the listing ends inside a row/);
      assert.equal(t.cut?.[0]?.line, 5);
    });

  it('a row cut short with rows of the listing after the prose is still an error', () => {
    assert.throws(
      () => parseCilium(`${BPF}10.96.122.\nsee below\n${BPF.split('\n')[1]}\n`, 'p'),
      /p:4: not a row of cilium bpf lb list/,
    );
  });

  it('a row that does not read before the last line is still an error at its line', () => {
    assert.throws(
      () => parseCilium(`${BPF}10.96.122.\n${BPF.split('\n')[1]}\n`, 'p'),
      /p:4: not a row of cilium bpf lb list/,
    );
  });
});
