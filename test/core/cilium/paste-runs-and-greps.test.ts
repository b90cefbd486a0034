// How Cilium listings are read where a paste shows more than one run, a cut row or only a grep
// of one: a command run again is the later state (cilium#18814's runs around a quarantine), a
// bpf lb list entry without its rev-NAT ID is cut (cilium#11724), `service list | grep` shows a
// frontend's further backends only within grep's window, and the flags warning leaves out
// l7-load-balancer, which the trees model. Service CIDR 10.96.0.0/12.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const DIR = 'test/fixtures/pastes';
const read = (text: string) => {
  const got = readPaste(text, { file: 'p.txt' });
  assert.ok(got.mode === 'cilium', got.mode);
  return got;
};

describe('two bpf lb list runs with a Service deleted between them', () => {
  // Cilium 1.18's bpf lb list (its Service address on every row), run before and after
  // `cilium-dbg service delete`; web's second backend gone meanwhile
  const run = (rows: string[]) => [
    'SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)',
    ...rows,
    '',
  ];
  const WEB = [
    '10.96.0.50:80/TCP (0)   0.0.0.0:0 (2) (0) [ClusterIP, non-routable]',
    '10.96.0.50:80/TCP (1)   10.244.0.5:8080/TCP (2) (1)',
  ];
  const OLD = [
    '10.96.0.60:80/TCP (0)   0.0.0.0:0 (3) (0) [ClusterIP, non-routable]',
    '10.96.0.60:80/TCP (1)   10.244.0.9:8080/TCP (3) (1)',
  ];
  const before = [...WEB, '10.96.0.50:80/TCP (2)   10.244.1.6:8080/TCP (2) (2)', ...OLD];
  const paste = (second: string) =>
    [
      '# cilium-dbg bpf lb list',
      ...run(before),
      '# cilium-dbg service delete 3',
      'Service 3 deleted',
      `# ${second}`,
      ...run(WEB),
    ].join('\n');

  it('the later run is the state: the deleted frontend is gone, and what changed is said', () => {
    const got = read(paste('cilium-dbg bpf lb list'));
    // before: 10.96.0.60:80 kept from the first run, as if the agent still held it
    assert.deepEqual(
      got.trees.services.map((t) => t.endpoints.map((e) => e.address)),
      [['10.244.0.5:8080']],
    );
    const text = rulesText(got.dump, got.trees, { label: 'p' });
    assert.match(
      text,
      /between the run before and the one at line 11: deleted 10\.96\.0\.60:80\/TCP; changed \(backends, their states, type or flags\) 10\.96\.0\.50:80\/TCP/,
    );
  });

  it('a later run piped through grep is not whole: what it lacks is kept, and said', () => {
    const got = read(paste('cilium-dbg bpf lb list | grep 10.96.0.50'));
    assert.equal(got.trees.services.length, 2);
    assert.match(
      rulesText(got.dump, got.trees, { label: 'p' }),
      /not in the run at line 11, which is not whole \(cut, elided or filtered\), so read as the run before lists them: 10\.96\.0\.60:80\/TCP/,
    );
  });

  it('a run before piped through grep is not whole either: what only the later lists is not said added', () => {
    // two greps of one listing for two backends (cilium#43358): each shows other frontends
    const got = read(
      [
        '# cilium-dbg bpf lb list | grep 10.244.0.9',
        '10.96.0.60:80/TCP (1)   10.244.0.9:8080/TCP (3) (1)',
        '# cilium-dbg bpf lb list | grep 10.244.0.5',
        '10.96.0.50:80/TCP (1)   10.244.0.5:8080/TCP (2) (1)',
      ].join('\n'),
    );
    const text = rulesText(got.dump, got.trees, { label: 'p' });
    assert.doesNotMatch(text, /added/);
    assert.match(
      text,
      /listed only by the run at line 3, the run before not being whole \(cut, elided or filtered\), so not known to be new: 10\.96\.0\.50:80\/TCP/,
    );
  });
});

describe('a run piped through head is not whole', () => {
  const full = [
    'ID   Frontend          Service Type   Backend',
    '1    10.96.0.1:443     ClusterIP      1 => 172.18.0.2:6443 (active)',
    '2    10.96.0.10:53     ClusterIP      1 => 10.244.0.3:53 (active)',
  ];
  const headed = [
    'ID   Frontend          Service Type   Backend',
    '2    10.96.0.10:53     ClusterIP      1 => 10.244.0.3:53 (active)',
  ];

  it('before a whole run: what only the later lists is not said added', () => {
    const text = rulesText(
      ...(() => {
        const got = read(
          [
            'root@node:/home/cilium# cilium service list | head -2',
            ...headed,
            'root@node:/home/cilium# cilium service list',
            ...full,
          ].join('\n'),
        );
        return [got.dump, got.trees] as const;
      })(),
      { label: 'p' },
    );
    assert.doesNotMatch(text, /added/);
    assert.match(text, /so not known to be new: 10\.96\.0\.1:443/);
  });

  it('after a whole run: what it lacks is kept, not said deleted', () => {
    const got = read(
      [
        'root@node:/home/cilium# cilium service list',
        ...full,
        'root@node:/home/cilium# cilium service list | head -2',
        ...headed,
      ].join('\n'),
    );
    assert.equal(got.trees.services.length, 2);
    assert.doesNotMatch(rulesText(got.dump, got.trees, { label: 'p' }), /deleted/);
  });
});

describe('a Cilium listing run again', () => {
  // cilium#18814's description up to its second run: a backend quarantined between the two
  const two = [
    '$ cilium service list',
    'ID   Frontend          Service Type   Backend',
    '4    10.96.95.246:80   ClusterIP      1 => 10.244.0.58:80 (active)',
    '                                      2 => 10.244.1.59:80 (active)',
    '                                      3 => 10.244.1.8:80 (active)',
    '',
    '$ cilium service update --backends 10.244.0.58:80 --states quarantined',
    'Updating backend states',
    'Updated service with 1 backends',
    '',
    '$ cilium service list',
    'ID   Frontend          Service Type   Backend',
    '4    10.96.95.246:80   ClusterIP      1 => 10.244.0.58:80 (quarantined)',
    '                                      2 => 10.244.1.59:80 (active)',
    '                                      3 => 10.244.1.8:80 (active)',
  ].join('\n');
  it('is read as its later run, and said so', () => {
    const got = read(two);
    const eps = got.trees.services[0]!.endpoints;
    assert.deepEqual(
      eps.map((e) => [e.address, e.cilium?.state, Math.round(e.probability * 100)]),
      [
        ['10.244.0.58:80', 'quarantined', 0],
        ['10.244.1.59:80', 'active', 50],
        ['10.244.1.8:80', 'active', 50],
      ],
    );
    assert.match(
      rulesText(got.dump, got.trees, { label: 'p' }),
      /printed again by the command at line 11 /,
    );
  });
});

describe('a bpf lb list cut inside a row', () => {
  // cilium#11724's listing as the page's copy ends, inside the third Service's backend port
  const cut = [
    'kubectl -n kube-system exec cilium-qqstk -- cilium bpf lb list',
    'SERVICE ADDRESS      BACKEND ADDRESS                ',
    '10.43.13.198:44134   0.0.0.0:0 (26) [ClusterIP]     ',
    '                     10.42.2.234:44134 (26)         ',
    '10.43.212.93:8443    10.42.3.158:8443 (7)           ',
    '                     0.0.0.0:0 (7) [ClusterIP]      ',
    '172.29.4.1:8000      10.42.1.23:8',
  ].join('\n');
  it('reads no backend nor frontend from the row: an entry without its rev-NAT ID is cut', () => {
    const got = read(cut);
    assert.deepEqual(
      got.trees.services.map((t) => [t.id, t.endpoints.map((e) => e.address)]),
      [
        ['10.43.13.198:44134', ['10.42.2.234:44134']],
        ['10.43.212.93:8443', ['10.42.3.158:8443']],
      ],
    );
    assert.match(
      rulesText(got.dump, got.trees, { label: 'p' }),
      /line 7: the paste ends inside a row/,
    );
  });
});

describe('cilium service list piped through grep', () => {
  const listing = (grep: string) =>
    [
      `root@node:/home/cilium# cilium service list | ${grep}`,
      '5    10.96.0.10:53       ClusterIP      1 => 10.244.0.3:53 (active)',
      '                                        2 => 10.244.1.4:53 (active)',
      '6    10.96.0.20:80       ClusterIP      1 => 10.244.0.7:80 (active)',
      '7    10.96.0.30:80       ClusterIP      1 => 10.244.0.8:80 (active)',
      '                                        2 => 10.244.1.9:80 (active)',
      '                                        3 => 10.244.1.10:80 (active)',
    ].join('\n');
  const shares = (text: string) =>
    read(text).trees.services.map((t) => [
      t.clusterIP,
      t.endpoints.map((e) => (e.shareUnknown ? null : Math.round(e.probability * 100))),
    ]);
  it('with -A 1: a frontend whose rows end inside the window is whole, one that fills it is not', () => {
    assert.deepEqual(shares(listing('grep -A 1 10.96.0')), [
      ['10.96.0.10', [null, null]],
      ['10.96.0.20', [100]],
      ['10.96.0.30', [null, null, null]],
    ]);
  });
  it('without -A: every frontend may have backends on rows grep did not print', () => {
    assert.deepEqual(
      shares(listing('grep 10.96.0')).map(([, s]) => s),
      [[null, null], [null], [null, null, null]],
    );
  });
});

describe('the flags a Cilium listing carries', () => {
  it('leaves l7-load-balancer out of those not compared: the trees model it (cilium#31503)', () => {
    const file = `${DIR}/cilium-31503-dbg-bpf-lb-list-l7lb-proxy-port-nodeport-internallocal-cut-mid-address.txt`;
    const got = read(readFileSync(file, 'utf8'));
    const text = rulesText(got.dump, got.trees, { label: 'p' });
    assert.match(text, /not compared here: non-routable/);
    assert.doesNotMatch(text, /not compared here:[^\n]*l7-load-balancer/);
  });
});

describe('a run of service list cut after its header, a service update before it (cilium#29055)', () => {
  const paste = [
    '# cilium service update --frontend 10.96.0.2:80:TCP --backends 10.244.0.3:80 --k8s-node-port',
    'Creating new service "10.96.0.2:80:TCP"',
    'Added service with 1 backends',
    '# cilium service list',
    'Frontend          Service Type   Backend',
    '10.96.0.2:80:TCP   NodePort       1 => 10.244.0.3:80 (active)',
    '',
    '# cilium service update --frontend 10.96.1.2:80:TCP --backends 10.244.1.3:80,10.244.1.4:80 --k8s-node-port',
    'Creating new service "10.96.1.2:80:TCP"',
    'Added service with 2 backends',
    '',
    '# cilium service list',
    'Frontend          Service Type   Backend',
    '10.96.0.2:80:T',
  ].join('\n');

  it('the run is at its list command, not at the update; its cut says no change, nor none', () => {
    const got = read(paste);
    const text = rulesText(got.dump, got.trees, { label: 'p' });
    assert.match(text, /printed again by the command at line 12 \(run again\)/, text);
    assert.doesNotMatch(text, /command at line 8|no frontend changed/, text);
    assert.match(
      text,
      /between the run before and the one at line 12, which is not whole \(cut, elided or filtered\): what changed is not known/,
    );
  });
});
