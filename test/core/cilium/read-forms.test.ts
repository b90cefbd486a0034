// Classes of what Cilium's CLI prints, each as its printer writes it at some release, read by
// the listing reader: the corpus (pastes.test.ts) holds one real sample of each; these pin the class.
import { ELISION_FORMS } from '../../support/elision-forms.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAddress } from '../../../src/core/dataplane/cilium/read/listing.js';
import { parseCilium } from '../../../src/core/dataplane/cilium/read/read.js';
import { ciliumDrift } from '../../../src/core/dataplane/cilium/drift.js';
import { buildCiliumTrees } from '../../../src/core/dataplane/cilium/trees.js';
import { rulesText } from '../../../src/output/rules.js';
import type { ServiceListScope } from '../../../src/core/facts/service-list-scope.js';

const keys = (text: string) =>
  parseCilium(text, 'p.txt').frontends.map(
    (f) => `${f.ip}:${f.port}${f.protocol ? `/${f.protocol}` : ''}${f.internal ? '/i' : ''}`,
  );

describe('an address as the listings print it', () => {
  // the common form is read by its characters, the others by the pattern: each a table row
  const cases: [string, ReturnType<typeof parseAddress>][] = [
    ['10.96.0.10:53/UDP', { ip: '10.96.0.10', port: 53, protocol: 'udp' }],
    ['10.96.0.10:53/udp', { ip: '10.96.0.10', port: 53, protocol: 'udp' }],
    ['10.96.0.1:443', { ip: '10.96.0.1', port: 443 }],
    ['10.0.0.2:80:TCP', { ip: '10.0.0.2', port: 80, protocol: 'tcp' }],
    ['10.0.0.2:0/ANY', { ip: '10.0.0.2', port: 0, protocol: 'any' }],
    ['10.0.0.2:80/NONE', { ip: '10.0.0.2', port: 80 }],
    ['10.0.0.2:080/TCP', { ip: '10.0.0.2', port: 80, protocol: 'tcp' }],
    ['[fd00::1]:80/TCP', { ip: 'fd00::1', port: 80, protocol: 'tcp' }],
    ['10.0.0.2:65536/TCP', undefined],
    ['10.0.0.2:123456', undefined],
    ['1000.0.0.2:80/TCP', undefined],
    ['10.0.0:80/TCP', undefined],
    ['10.0.0.2:/TCP', undefined],
    ['10.0.0.2:80/TC', undefined],
    ['10.0.0.2:80/TCP ', undefined],
    ['10.0.0.2:80/TCP/x', undefined],
    // a word that is a property of every object is no protocol
    ['10.0.0.2:80/constructor', undefined],
    ['10.0.0.2:80/toString', undefined],
  ];
  for (const [text, want] of cases)
    it(`${text}: ${want ? JSON.stringify(want) : 'not an address'}`, () =>
      assert.deepEqual(parseAddress(text), want));
});

describe('a frontend of internal scope written without a protocol (1.10-1.16)', () => {
  it('is the address of that scope, not an address with a protocol "i"', () => {
    assert.deepEqual(parseAddress('10.0.2.15:30693/i'), {
      ip: '10.0.2.15',
      port: 30693,
      internal: true,
    });
    assert.deepEqual(parseAddress('[fd00::1]:80/TCP/i'), {
      ip: 'fd00::1',
      port: 80,
      protocol: 'tcp',
      internal: true,
    });
    assert.equal(parseAddress('10.0.2.15:80/X'), undefined);
  });

  it('is a frontend of its own beside the plain one, with its own backends', () => {
    const rows =
      'ID   Frontend            Service Type   Backend\n' +
      '28   10.0.2.15:31786     NodePort       1 => 10.0.0.111:69\n' +
      '29   10.0.2.15:31786/i   NodePort       1 => 10.0.1.195:69\n' +
      '                                        2 => 10.0.0.111:69\n';
    const t = parseCilium(rows, 'p.txt');
    assert.deepEqual(keys(rows), ['10.0.2.15:31786', '10.0.2.15:31786/i']);
    assert.deepEqual(
      t.frontends.map((f) => f.backends.length),
      [1, 2],
    );
  });
});

describe('the CLI\'s own stderr in a paste ("error parsing frontend &{...}", no newline)', () => {
  const rows = '1    10.96.0.1:443   1 => 10.0.0.1:6443\n';
  it('after the table: the rows read, the listing said to lack what the CLI could not print', () => {
    const t = parseCilium(
      `ID   Frontend        Backend\n${rows}error parsing frontend &{IP:<nil> Port:9093 Protocol:TCP}error parsing frontend &{IP:<nil> Port:2888 Protocol:TCP}\n`,
      'p.txt',
    );
    assert.deepEqual(
      t.frontends.map((f) => f.backends.length),
      [1],
    );
    assert.equal(t.cut?.length, 1);
    assert.equal(t.cut[0]!.line, 3);
    assert.match(t.cut[0]!.reason, /"error parsing frontend &\{IP:<nil> Port:9093 Protocol:TCP\}"/);
  });

  it('glued before the header (stderr is written before the table is flushed): the header still reads', () => {
    const t = parseCilium(
      `error parsing svc: empty stateID   Frontend        Service Type   Backend\n1    10.96.0.1:443   ClusterIP      1 => 10.0.0.1:6443 (active)\n`,
      'p.txt',
    );
    assert.equal(t.frontends[0]!.type, 'ClusterIP');
    assert.equal(t.cut?.[0]?.line, 1);
    assert.match(t.cut?.[0]?.reason ?? '', /"error parsing svc: empty state"/);
  });

  it('several glued after "empty state": each message is one, the first quoted whole', () => {
    const t = parseCilium(
      `ID   Frontend        Backend\n${rows}error parsing svc: empty stateerror parsing frontend &{IP:<nil> Port:9093 Protocol:TCP}error parsing backend &{IP:<nil> Port:0}\n`,
      'p.txt',
    );
    assert.deepEqual(t.cut, [
      {
        line: 3,
        reason:
          'Cilium\'s CLI printed "error parsing svc: empty state" and 2 more such errors: the entries it could not parse are not in its listing',
      },
    ]);
  });

  it('in a listing also elided ("..."): both said, one each with its line', () => {
    const t = parseCilium(
      `ID   Frontend        Backend\n...\n${rows}error parsing frontend &{IP:<nil> Port:9093 Protocol:TCP}\n`,
      'p.txt',
    );
    assert.deepEqual(t.cut, [
      { line: 2, reason: 'rows left out ("...")' },
      {
        line: 4,
        reason:
          'Cilium\'s CLI printed "error parsing frontend &{IP:<nil> Port:9093 Protocol:TCP}": the entries it could not parse are not in its listing',
      },
    ]);
  });
});

describe('a command written without a prompt before rows without a header', () => {
  it('is the command, not a row (`cilium service list` of 2017, before its table)', () => {
    const text = 'cilium service list\n10.0.0.10:53 =>\n\t\t1 => 10.1.0.3:53 (1)\n';
    assert.deepEqual(keys(text), ['10.0.0.10:53']);
  });
});

describe('db/show frontends, then a prompt and bpf lb list in one paste', () => {
  const text =
    '$ cilium shell db/show frontends\n' +
    'Address               Type        ServiceName   PortName   Backends             Status\n' +
    '10.96.15.6:80/TCP     ClusterIP   default/web              10.0.0.58:8080/TCP   Done\n' +
    '\n' +
    '$ cilium bpf lb list\n' +
    'SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
    '10.96.15.6:80/TCP (0)   0.0.0.0:0 (7) (0) [ClusterIP, Local, non-routable]\n' +
    '10.96.15.6:0/ANY (0)    0.0.0.0:0 (0) (0) [ClusterIP, non-routable]\n';

  it("reads both: the map's flags kept on the table's frontend, the drop entry kept", () => {
    const t = parseCilium(text, 'p.txt');
    assert.equal(t.unreadFrom, undefined);
    assert.deepEqual(keys(text), ['10.96.15.6:80/tcp', '10.96.15.6:0/any']);
    assert.deepEqual(t.frontends[0]!.flags, ['Local', 'non-routable']);
  });

  it("1.19's drop entry (port 0, ANY) is no Service port: no tree of its own", () => {
    const trees = buildCiliumTrees(parseCilium(text, 'p.txt'), new Map());
    assert.deepEqual(
      trees.services.map((s) => s.id),
      ['10.96.15.6:80/TCP'],
    );
  });
});

describe("1.19's drop entry in the agent's table against the objects", () => {
  it('is no frontend the objects lack (a stale one), where a real leftover is', () => {
    const table = parseCilium(
      'SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
        '10.96.15.6:0/ANY (0)    0.0.0.0:0 (0) (0) [ClusterIP, non-routable]\n' +
        '10.96.99.9:80/TCP (0)   0.0.0.0:0 (8) (0) [ClusterIP, non-routable]\n',
      'p.txt',
    );
    const drift = ciliumDrift({
      node: 'n1',
      expected: [],
      table,
      services: ['default/kubernetes'],
      scoped: false,
      listed: { kind: 'all' },
    });
    assert.deepEqual(
      drift.findings.filter((f) => f.id === 'cilium-frontend-stale').map((f) => f.drift.actual),
      [['p.txt:3: 10.96.99.9:80/TCP ClusterIP']],
    );
  });
});

describe('a frontend of a Service the objects do not hold: stale only where the Service list was read', () => {
  const table = parseCilium(
    'ID   Frontend            Service Type   Backend\n' +
      '1    10.96.0.10:53/UDP   ClusterIP      1 => 10.244.1.5:53/UDP (active)\n',
    'service-list.txt',
  );
  const stale = (services: string[], listed: ServiceListScope) =>
    ciliumDrift({ node: 'n1', expected: [], table, services, listed, scoped: false })
      .findings.filter((f) => f.id === 'cilium-frontend-stale')
      .map((f) => f.title);
  it("a one-Service or one namespace's capture (a frontend naming no Service): not called stale", () => {
    assert.deepEqual(stale(['shop/web'], { kind: 'none' }), []);
    assert.deepEqual(stale(['shop/web'], { kind: 'namespace', namespace: 'shop' }), []);
  });
  it("every namespace's list read: stale", () =>
    assert.deepEqual(stale(['default/kubernetes', 'shop/web'], { kind: 'all' }), [
      'frontend 10.96.0.10:53/UDP ClusterIP not in the objects',
    ]));
});

describe("kubectl's own lines around a listing it ran in the agent's Pod", () => {
  const rows = '9    172.18.0.3:30495   NodePort       1 => 10.0.0.24:9495 (active)\n';
  it('"Defaulted container ..." before grepped rows under a "[user@host dir]$ " prompt: the rows read', () => {
    const text =
      '[root@h dir]$ kubectl exec -it ds/cilium -- cilium service list | grep 30495\n' +
      'Defaulted container "cilium-agent" out of: cilium-agent, config (init)\n' +
      `${rows}[root@h dir]$ \n`;
    assert.deepEqual(keys(text), ['172.18.0.3:30495']);
  });
  it('the notice wrapped by the terminal, mid-name: its rest is no row either', () => {
    const text =
      'Defaulted container "cilium-agent" out of: cilium-agent, config (init), mount-cgroup (init), mo\n' +
      'unt-bpf-fs (init), clean-cilium-state (init)\n' +
      rows;
    assert.deepEqual(keys(text), ['172.18.0.3:30495']);
  });
  it('among the rows (a TTY kubectl could not use): not a row', () => {
    const text =
      'ID   Frontend           Service Type   Backend\n' +
      'Unable to use a TTY - input is not a terminal or the right kind of file\n' +
      rows;
    assert.deepEqual(keys(text), ['172.18.0.3:30495']);
  });
  it('"command terminated with exit code N" after the rows: the listing may not be whole', () => {
    const table = parseCilium(
      `ID   Frontend           Service Type   Backend\n${rows}command terminated with exit code 1\n`,
      'p.txt',
    );
    assert.equal(table.frontends.length, 1);
    assert.equal(table.cut?.[0]?.line, 3);
  });
  it('a prompt alone at the end of a trimmed paste ends the listing', () => {
    assert.deepEqual(keys(`ID   Frontend   Service Type   Backend\n${rows}root@node130:~#\n`), [
      '172.18.0.3:30495',
    ]);
  });
});

describe('cilium service list rows of before the Service Type column, without their header', () => {
  it('are rows of that listing ("ID  FRONTEND  1 => BACKEND"), no type said', () => {
    const table = parseCilium(
      '8    172.18.0.50:80      1 => 10.2.1.189:80\n15   172.18.0.146:9200   1 => 10.2.2.84:9200\n',
      'p.txt',
    );
    assert.equal(table.form, 'service-list');
    assert.deepEqual(
      table.frontends.map((f) => [f.ip, f.port, f.type, f.backends.length]),
      [
        ['172.18.0.50', 80, undefined, 1],
        ['172.18.0.146', 9200, undefined, 1],
      ],
    );
  });
});

describe('cilium service list with a column after Backend (a build that printed more)', () => {
  it('reads the rows up to that column, its cells on lines of their own not taken for rows', () => {
    const text =
      'ID   Frontend           Service Type   Backend                    Source Ranges   \n' +
      '1    172.20.0.1:443     ClusterIP      1 => 192.168.60.11:6443    1.1.1.0/24      \n' +
      '                                       2 => 192.168.60.12:6443    2.1.1.0/24      \n' +
      '                                                                  3.1.1.0/24      \n' +
      '2    172.20.0.10:53     ClusterIP                                 1.1.1.0/24      \n';
    const table = parseCilium(text, 'p.txt');
    assert.deepEqual(
      table.frontends.map((f) => [f.ip, f.backends.map((b) => b.ip)]),
      [
        ['172.20.0.1', ['192.168.60.11', '192.168.60.12']],
        ['172.20.0.10', []],
      ],
    );
  });
  it('tab-indented as a CI log prints it: the columns line up once tabs are expanded', () => {
    const text =
      ' \t ID   Frontend          Service Type   Backend                Extra   \n' +
      '\t 1    10.96.0.1:443     ClusterIP      1 => 10.0.0.1:6443     x       \n' +
      '\t                                       2 => 10.0.0.2:6443     y       \n';
    assert.equal(parseCilium(text, 'p.txt').frontends[0]!.backends.length, 2);
  });
});

describe("Cilium's output that lists no Service", () => {
  const refused = (text: string) => {
    try {
      parseCilium(text, 'p.txt');
    } catch (e) {
      return (e as Error).message;
    }
    return 'read';
  };
  it("the agent's status (its KubeProxyReplacement Details): said to be the status", () => {
    const status =
      'KubeProxyReplacement:   True   [eth0   172.18.0.2 (Direct Routing)]\n' +
      'Cilium:                 Ok   1.15.0 (v1.15.0)\n' +
      'KubeProxyReplacement Details:\n  Status:                 True\n';
    assert.match(refused(status), /^p\.txt:1: this is the agent's `cilium-dbg status`/);
  });
  it("a YAML dump of the Services (go-yaml's or sigs.k8s.io/yaml's names): said to be YAML", () => {
    assert.match(
      refused('status:\n  realized:\n    backendaddresses:\n    - ip: 1.1.1.1\n'),
      /-o yaml/,
    );
    assert.match(refused('- spec:\n    backend-addresses:\n    - ip: 1.1.1.1\n'), /-o yaml/);
  });
  it('each at the line where it starts, below the command that printed it', () => {
    assert.match(
      refused(
        '$ cilium-dbg service list -o yaml\n- spec:\n    backend-addresses:\n    - ip: 1.1.1.1\n',
      ),
      /^p\.txt:2: this is `cilium-dbg service list -o yaml`/,
    );
    assert.match(
      refused('# cilium-dbg status\nKVStore:   Ok   Disabled\nKubernetes:   Ok   1.27\n'),
      /^p\.txt:2: this is the agent's `cilium-dbg status`/,
    );
  });
});

describe('backends marked "(preferred)" (service list --clustermesh-affinity)', () => {
  const text =
    'ID   Frontend               Service Type   Backend\n' +
    '9    10.2.183.236:80/TCP    ClusterIP      1 => 10.1.1.179:80/TCP (active)\n' +
    '                                           2 => 10.0.1.234:80/TCP (active) (preferred)\n' +
    '                                           3 => 10.0.1.128:80/TCP (active) (preferred)\n';
  it('only the preferred active ones take new connections, as the agent fills the slots', () => {
    const table = parseCilium(text, 'p.txt');
    assert.deepEqual(
      table.frontends[0]!.backends.map((b) => b.preferred ?? false),
      [false, true, true],
    );
    const tree = buildCiliumTrees(table, new Map()).services[0]!;
    assert.deepEqual(
      tree.endpoints.map((e) => [e.probability, e.cilium?.preferred]),
      [
        [0, false],
        [0.5, true],
        [0.5, true],
      ],
    );
  });
  it('none preferred among the active: the active ones, as before', () => {
    const table = parseCilium(text.replace(/ \(preferred\)/g, ''), 'p.txt');
    const tree = buildCiliumTrees(table, new Map()).services[0]!;
    assert.deepEqual(
      tree.endpoints.map((e) => e.probability),
      [1 / 3, 1 / 3, 1 / 3],
    );
    assert.equal(tree.endpoints[0]!.cilium?.preferred, undefined);
  });
});

describe('frontends that are no Service entry of their kind', () => {
  it('a HostPort and a LocalRedirect are said as Cilium names them; a wildcard port with its protocol', () => {
    const table = parseCilium(
      'ID   Frontend              Service Type    Backend\n' +
        '1    0.0.0.0:8126/TCP      HostPort        1 => 10.0.0.2:8126/TCP (active)\n' +
        '2    10.96.0.10:53/UDP     LocalRedirect   1 => 10.0.0.3:53/UDP (active)\n' +
        '3    0.0.0.0:30003/TCP     NodePort        1 => 10.0.0.4:80/TCP (active)\n',
      'p.txt',
    );
    const text = rulesText(table, buildCiliumTrees(table, new Map()), { label: 'file p.txt' });
    assert.match(text, /host port 8126\/tcp on every node address/);
    assert.match(text, /local redirect 10\.96\.0\.10:53\/udp/);
    assert.match(text, /node port 30003\/tcp on every node address/);
  });
});

describe('service list -o json: a frontend of the internal scope (externalTrafficPolicy Local, 1.10+)', () => {
  it('is the REST model\'s "scope": "internal", a frontend of its own beside the external one', () => {
    const fe = (scope: string, backends: string[]) => ({
      spec: {
        'frontend-address': { ip: '10.0.2.15', port: 30693, protocol: 'TCP', scope },
        'backend-addresses': backends.map((ip) => ({ ip, port: 80, state: 'active' })),
        flags: { type: 'NodePort' },
        id: 1,
      },
    });
    const table = parseCilium(
      JSON.stringify([fe('external', ['10.0.1.5']), fe('internal', ['10.0.1.5', '10.0.2.7'])]),
      'p.json',
    );
    assert.deepEqual(
      table.frontends.map((f) => [f.internal ?? false, f.backends.length]),
      [
        [false, 1],
        [true, 2],
      ],
    );
  });
});

describe('a listing kept as shell comments under its command ("# " before every line)', () => {
  it('is read with the mark taken off, its columns where they were', () => {
    const text =
      'kwest exec -n kube-system ds/cilium -- cilium service list\n' +
      '# ID   Frontend               Service Type   Backend\n' +
      '# 3    10.2.0.10:53/UDP       ClusterIP      1 => 10.0.0.161:53/UDP (active)\n' +
      '#                                            2 => 10.0.0.23:53/UDP (active)\n' +
      '#\n' +
      'kwest describe svc webpod\n';
    assert.deepEqual(keys(text), ['10.2.0.10:53/udp']);
    assert.equal(parseCilium(text, 'p.txt').frontends[0]!.backends.length, 2);
  });
  it('a "# " root prompt before a listing is no comment: the listing reads as it is', () => {
    const text =
      '# cilium service list\nID   Frontend        Service Type   Backend\n1    10.96.0.1:443   ClusterIP      1 => 10.0.0.1:6443 (active)\n';
    assert.deepEqual(keys(text), ['10.96.0.1:443']);
  });
});

describe('service get / list -o json under a "[user@host dir]# " prompt, kubectl\'s line, the next prompt', () => {
  it('is the JSON between them, not the prompt taken for its opening bracket', () => {
    const text =
      '[root@~]# kubectl exec -it -n kube-system cilium-vsk8j -- cilium service get 132 -o json\n' +
      'Defaulted container "cilium-agent" out of: cilium-agent, clean-cilium-state (init)\n' +
      '{\n  "spec": {\n    "backend-addresses": [{ "ip": "10.0.0.213", "port": 8080 }],\n' +
      '    "flags": { "type": "ClusterIP", "name": "a]b{" },\n' +
      '    "frontend-address": { "ip": "10.98.24.168", "port": 8080, "scope": "external" },\n' +
      '    "id": 132\n  }\n}\n[root@~]# exit\n';
    assert.deepEqual(keys(text), ['10.98.24.168:8080']);
  });
});

describe('bpf lb list -o json (the map the table prints, key to entries)', () => {
  it('1.15.4+: a key per slot, read as the table, each entry at its JSON line', () => {
    const text =
      '$ cilium-dbg bpf lb list -o json\n{\n' +
      '  "10.96.0.1:443/TCP (0)": [\n    "0.0.0.0:0 (1) (0) [ClusterIP, non-routable]"\n  ],\n' +
      '  "10.96.0.1:443/TCP (1)": [\n    "172.18.0.3:6443/TCP (1) (1)"\n  ]\n}\n$ exit\n';
    const table = parseCilium(text, 'p.txt');
    assert.equal(table.form, 'bpf-lb-list');
    const [f] = table.frontends;
    assert.deepEqual(
      [f!.ip, f!.type, f!.backends.map((b) => [b.ip, b.line])],
      ['10.96.0.1', 'ClusterIP', [['172.18.0.3', 7]]],
    );
  });
  it("before 1.15.4: a key per Service, its entries (the Service's own among them) in a list", () => {
    const text =
      '{\n  "[fd00::10]:53": [\n    "[fd00::5]:53 (3) (1)",\n    "[::]:0 (3) (0) [ClusterIP, non-routable]",\n' +
      '    "[fd00::6]:53 (3) (2)"\n  ]\n}\n';
    const [f] = parseCilium(text, 'p.txt').frontends;
    assert.deepEqual(
      f!.backends.map((b) => b.ip),
      ['fd00::5', 'fd00::6'],
    );
    assert.equal(f!.type, 'ClusterIP');
  });
});

describe('grepped rows that say their listing without its header', () => {
  it('a service list row of a frontend without backends (its type ends the row)', () => {
    const table = parseCilium('4    0.0.0.0:30965/TCP         NodePort\n', 'p.txt');
    assert.equal(table.form, 'service-list');
    assert.deepEqual(
      table.frontends.map((f) => [f.ip, f.port, f.type, f.backends.length]),
      [['0.0.0.0', 30965, 'NodePort', 0]],
    );
  });
  it('bpf lb list rows of a backend alone (grep BACKEND), slot keys or not', () => {
    const slot = parseCilium(
      '10.96.48.145:80/TCP (2)        172.20.1.219:80/TCP (20) (2)\n',
      'p.txt',
    );
    assert.equal(slot.form, 'bpf-lb-list');
    assert.deepEqual(
      slot.frontends.map((f) => [f.ip, f.backends.map((b) => b.ip)]),
      [['10.96.48.145', ['172.20.1.219']]],
    );
    const old = parseCilium('10.96.0.1:443       172.18.0.3:6443 (1) (1)\n', 'p.txt');
    assert.deepEqual(
      old.frontends[0]!.backends.map((b) => b.port),
      [6443],
    );
  });

  it("claims no share where the Service's own row (slot 0) is not in the paste; the whole Service does", () => {
    const rows = [
      '10.96.48.145:80/TCP (2)        172.20.1.219:80/TCP (20) (2)',
      '10.96.48.145:80/TCP (3)        172.20.2.77:80/TCP (20) (3)',
    ];
    const shares = (text: string) => {
      const tree = buildCiliumTrees(parseCilium(text, 'p.txt'), new Map()).services[0]!;
      return {
        partial: tree.partial !== undefined,
        unknown: tree.endpoints.map((e) => e.shareUnknown !== undefined),
      };
    };
    assert.deepEqual(shares(`${rows.join('\n')}\n`), { partial: true, unknown: [true, true] });
    const whole = [
      '10.96.48.145:80/TCP (1)        172.20.0.158:80/TCP (20) (1)',
      ...rows,
      '10.96.48.145:80/TCP (0)        0.0.0.0:0 (20) (0) [ClusterIP, non-routable]',
    ];
    assert.deepEqual(shares(`${whole.join('\n')}\n`), {
      partial: false,
      unknown: [false, false, false],
    });
  });
});

describe('-o json after lines that open with a bracket (a shell job notice, a log timestamp)', () => {
  const list =
    '$ cilium-dbg service list -o json\n[\n  {\n    "spec": {\n' +
    '      "backend-addresses": [{ "ip": "10.0.0.213", "port": 8080 }],\n' +
    '      "flags": { "type": "ClusterIP" },\n' +
    '      "frontend-address": { "ip": "10.98.24.168", "port": 8080, "scope": "external" },\n' +
    '      "id": 132\n    }\n  }\n]\n';
  it('is the JSON the CLI prints, its bracket alone on its line, not "[1]" or "[2024-..."', () => {
    assert.deepEqual(keys(`[1]+  Done                    sleep 10\n${list}`), [
      '10.98.24.168:8080',
    ]);
    assert.deepEqual(keys(`[2024-05-01 10:00:00] connected\n${list}`), ['10.98.24.168:8080']);
  });
  it('cut: the listing said not to parse, at its line and by its kind, not read as its first object', () => {
    const cut = list.split('\n').slice(0, 8).join('\n');
    assert.throws(
      () => parseCilium(`[1]+  Done  sleep 10\n${cut}`, 'p.txt'),
      /^CiliumParseError: p\.txt:3: not the JSON of cilium-dbg service list -o json: /,
    );
  });
});

describe('bpf lb list -o json written compact (jq -c): every entry of a line read', () => {
  it('the Service entry and each backend, though they share one line', () => {
    const text =
      '{"10.96.0.1:443":["0.0.0.0:0 (1) (0) [ClusterIP, non-routable]","172.18.0.3:6443 (1) (1)","172.18.0.4:6443 (1) (2)"]}\n';
    const [f] = parseCilium(text, 'p.txt').frontends;
    assert.deepEqual(
      [f!.type, f!.backends.map((b) => [b.ip, b.line])],
      [
        'ClusterIP',
        [
          ['172.18.0.3', 1],
          ['172.18.0.4', 1],
        ],
      ],
    );
  });
});

describe('service list -o json from 1.18: the REST model marks every backend preferred', () => {
  const json = (preferred: boolean[]) =>
    JSON.stringify([
      {
        spec: {
          'frontend-address': { ip: '10.96.0.10', port: 53, protocol: 'UDP', scope: 'external' },
          'backend-addresses': preferred.map((p, i) => ({
            ip: `10.0.0.${i + 1}`,
            port: 53,
            state: 'active',
            preferred: p,
          })),
          flags: { type: 'ClusterIP' },
          id: 1,
        },
      },
    ]);
  const said = (preferred: boolean[]) => {
    const table = parseCilium(json(preferred), 'p.json');
    const tree = buildCiliumTrees(table, new Map()).services[0]!;
    return {
      marks: tree.endpoints.map((e) => e.cilium?.preferred),
      text: rulesText(table, buildCiliumTrees(table, new Map()), { label: 'file p.json' }),
    };
  };
  it('every one marked: no preference said (no ", preferred" on each)', () => {
    const { marks, text } = said([true, true]);
    assert.deepEqual(marks, [undefined, undefined]);
    assert.doesNotMatch(text, /preferred/);
  });
  it('some marked and some not (cluster-mesh affinity): said of each', () => {
    const { marks, text } = said([true, false]);
    assert.deepEqual(marks, [true, false]);
    assert.match(text, /, preferred/);
  });
});

describe('service get -o json after other JSON (kubectl get -o json of the Service)', () => {
  it('is the object of the REST model (its spec), not the first object that parses', () => {
    const text =
      '$ kubectl get svc web -o json\n{\n  "kind": "Service",\n  "spec": { "clusterIP": "10.96.0.7" }\n}\n' +
      '$ cilium-dbg service get 7 -o json\n{\n  "spec": {\n' +
      '    "frontend-address": { "ip": "10.96.0.7", "port": 80, "scope": "external" },\n' +
      '    "flags": { "type": "ClusterIP" },\n    "id": 7\n  }\n}\n';
    assert.deepEqual(keys(text), ['10.96.0.7:80']);
  });
});

describe("an author's elision in any form (../../../src/core/dataplane/paste/elisions.ts)", () => {
  const SNIPS = ['...', ...ELISION_FORMS];
  const trees = (text: string) => buildCiliumTrees(parseCilium(text, 'p.txt'), new Map()).services;

  it("inside a service list's backend lines: that frontend's backends may go on, no share is said, and the rows after it are read", () => {
    for (const snip of SNIPS) {
      const text =
        'ID   Frontend            Service Type   Backend\n' +
        '1    10.96.0.10:53/UDP   ClusterIP      1 => 10.244.0.2:53/UDP (active)\n' +
        '                                        2 => 10.244.0.3:53/UDP (active)\n' +
        `                                        ${snip}\n` +
        '                                        7 => 10.244.0.8:53/UDP (active)\n' +
        '2    10.96.0.1:443/TCP   ClusterIP      1 => 192.168.0.10:6443/TCP (active)\n';
      const t = parseCilium(text, 'p.txt');
      assert.deepEqual(t.cut, [{ line: 4, reason: `rows left out ("${snip}")` }], snip);
      // a backend after the elision may be another frontend's (its row left out): not read as this one's
      assert.deepEqual(
        t.frontends.map((f) => [f.ip, f.backends.map((b) => b.ip)]),
        [
          ['10.96.0.10', ['10.244.0.2', '10.244.0.3']],
          ['10.96.0.1', ['192.168.0.10']],
        ],
        snip,
      );
      const [dns, api] = trees(text);
      assert.match(dns!.partial ?? '', /elides rows after its backends \(line 4\)/, snip);
      assert.ok(
        dns!.endpoints.every((e) => e.shareUnknown !== undefined),
        snip,
      );
      assert.equal(api!.partial, undefined, snip);
      assert.deepEqual(
        api!.endpoints.map((e) => [e.probability, e.shareUnknown]),
        [[1, undefined]],
        snip,
      );
    }
  });

  it('after a frontend without backends: its backends are not said to be none', () => {
    const text =
      'ID   Frontend            Service Type   Backend\n' +
      '1    10.96.0.10:53/UDP   ClusterIP\n' +
      '[snip]\n';
    const [dns] = trees(text);
    assert.deepEqual(dns!.endpoints, []);
    assert.match(dns!.partial ?? '', /elides rows after its backends/);
    const said = rulesText(
      parseCilium(text, 'p.txt'),
      buildCiliumTrees(parseCilium(text, 'p.txt'), new Map()),
      { label: 'p' },
    );
    assert.doesNotMatch(said, /no endpoints/);
  });

  it('between bpf lb list entries (a row per slot, or the Service address once): the entry before may go on, the rows after are read', () => {
    const perSlot =
      'SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
      '10.96.0.10:53/UDP (0)   0.0.0.0:0 (7) (0) [ClusterIP, non-routable]\n' +
      '10.96.0.10:53/UDP (1)   10.244.0.2:53/UDP (7) (1)\n' +
      'SNIP\n' +
      '10.96.0.1:443/TCP (0)   0.0.0.0:0 (3) (0) [ClusterIP, non-routable]\n' +
      '10.96.0.1:443/TCP (1)   192.168.0.10:6443/TCP (3) (1)\n';
    const once =
      'SERVICE ADDRESS       BACKEND ADDRESS\n' +
      '10.96.0.10:53         0.0.0.0:0 (7) (0) [ClusterIP, non-routable]\n' +
      '                      10.244.0.2:53 (7) (1)\n' +
      '                      SNIP\n' +
      '                      10.244.0.9:53 (7) (5)\n' +
      '10.96.0.1:443         0.0.0.0:0 (3) (0) [ClusterIP, non-routable]\n' +
      '                      192.168.0.10:6443 (3) (1)\n';
    for (const snip of SNIPS)
      for (const listing of [perSlot, once]) {
        const text = listing.replace('SNIP', snip);
        const t = parseCilium(text, 'p.txt');
        assert.equal(t.cut?.[0]?.line, 4, snip);
        assert.deepEqual(
          t.frontends.map((f) => [f.ip, f.backends.map((b) => b.ip)]),
          [
            ['10.96.0.10', ['10.244.0.2']],
            ['10.96.0.1', ['192.168.0.10']],
          ],
          snip,
        );
        const [dns, api] = trees(text);
        assert.match(dns!.partial ?? '', /elides rows after its backends \(line 4\)/, snip);
        assert.equal(dns!.endpoints[0]!.shareUnknown !== undefined, true, snip);
        assert.equal(api!.partial, undefined, snip);
      }
  });

  it('inside db/show frontends and backends: the rows on either side are read, the table said not whole', () => {
    const frontends =
      'Address             Type        ServiceName          PortName   Backends                         Status\n' +
      '10.96.0.1:443/TCP   ClusterIP   default/kubernetes   https      172.18.0.2:6443/TCP (active)     Done\n' +
      'SNIP\n' +
      '10.96.0.10:53/UDP   ClusterIP   kube-system/kube-dns dns        10.244.1.56:53/UDP (active)      Done\n';
    const backends =
      'Address              State    Instances\n' +
      '172.18.0.2:6443/TCP  active   default/kubernetes (https)\n' +
      'SNIP\n' +
      '10.244.1.56:53/UDP   active   kube-system/kube-dns (dns)\n';
    for (const snip of SNIPS) {
      const f = parseCilium(frontends.replace('SNIP', snip), 'p.txt');
      assert.deepEqual(
        f.frontends.map((x) => x.ip),
        ['10.96.0.1', '10.96.0.10'],
        snip,
      );
      assert.deepEqual(f.cut, [{ line: 3, reason: `rows left out ("${snip}")` }], snip);
      const b = parseCilium(backends.replace('SNIP', snip), 'p.txt');
      assert.equal(b.backendStates?.size, 2, snip);
      assert.equal(b.cut?.[0]?.line, 3, snip);
    }
  });

  it('rows after a line that is no row and no elision are said not read, and the frontend above claims no share', () => {
    const list =
      'ID   Frontend            Service Type   Backend\n' +
      '1    10.96.0.10:53/UDP   ClusterIP      1 => 10.244.0.2:53/UDP (active)\n' +
      '                                        2 => 10.244.0.3:53/UDP (active)\n' +
      'NOTE\n' +
      '                                        3 => 10.244.0.4:53/UDP (active)\n' +
      '2    10.96.0.1:443/TCP   ClusterIP      1 => 192.168.0.10:6443/TCP (active)\n';
    const bpf =
      'SERVICE ADDRESS         BACKEND ADDRESS (REVNAT_ID) (SLOT)\n' +
      '10.96.0.10:53/UDP (0)   0.0.0.0:0 (7) (0) [ClusterIP, non-routable]\n' +
      '10.96.0.10:53/UDP (1)   10.244.0.2:53/UDP (7) (1)\n' +
      '10.96.0.10:53/UDP (2)   10.244.0.3:53/UDP (7) (2)\n' +
      'NOTE\n' +
      '10.96.0.1:443/TCP (0)   0.0.0.0:0 (3) (0) [ClusterIP, non-routable]\n';
    for (const [listing, line] of [
      [list, 4],
      [bpf, 5],
    ] as const)
      for (const note of ['the rest looks the same', 'and so on']) {
        const text = listing.replace('NOTE', note);
        const t = parseCilium(text, 'p.txt');
        assert.deepEqual(
          t.cut,
          [
            {
              line,
              reason: `lines from here not read ("${note}" is no row of the listing, and rows follow it)`,
            },
          ],
          note,
        );
        assert.deepEqual(
          t.frontends.map((f) => [f.ip, f.backends.map((b) => b.ip)]),
          [['10.96.0.10', ['10.244.0.2', '10.244.0.3']]],
          note,
        );
        const [dns] = trees(text);
        assert.match(dns!.partial ?? '', new RegExp(`\\(line ${line}\\)`), note);
        assert.ok(
          dns!.endpoints.every((e) => e.shareUnknown !== undefined),
          note,
        );
      }
    // prose after the listing's last row: nothing more to read, nothing said
    const after = parseCilium(list.split('NOTE')[0] + 'the rest looks the same\n', 'p.txt');
    assert.equal(after.cut, undefined);
    // a numbered note or a route after it starts with a digit, but is no row of the listing
    for (const [listing, tail] of [
      [list, 'Things I tried so far:\n1. restarted the agent\n'],
      [bpf, 'and the routes:\n10.0.0.0/24 via 10.0.0.1 dev cilium_host\n'],
    ] as const) {
      const whole = parseCilium(listing.split('NOTE')[0] + tail, 'p.txt');
      assert.equal(whole.cut, undefined, tail);
      assert.ok(
        trees(listing.split('NOTE')[0] + tail)[0]!.endpoints.every(
          (e) => e.shareUnknown === undefined,
        ),
        tail,
      );
    }
  });

  it('before 1.10, a bpf lb list backend row has no slot: rows of it after a note are still rows', () => {
    const text =
      'SERVICE ADDRESS        BACKEND ADDRESS\n' +
      '10.254.162.28:8080     0.0.0.0:0 (59) [ClusterIP, non-routable]\n' +
      '                       192.168.214.171:8080 (59)\n' +
      'note: rows of this Service left out here\n' +
      '                       192.168.154.116:8080 (59)\n' +
      '                       192.168.177.116:8080 (59)\n';
    const t = parseCilium(text, 'p.txt');
    assert.equal(t.cut?.[0]?.line, 4);
    assert.ok(trees(text)[0]!.endpoints.every((e) => e.shareUnknown !== undefined));
  });

  it('db/show tables: a prose line ends the table, said where rows follow it; the paste is read', () => {
    const head =
      'Address                 Type        ServiceName            PortName   Backends                                   Status\n' +
      '10.1.0.1:443/TCP        ClusterIP   default/kubernetes     https      10.0.12.7:6443/TCP                         Done\n';
    const dns =
      '10.1.0.10:53/UDP        ClusterIP   kube-system/kube-dns   dns        10.244.0.2:53/UDP, 10.244.1.2:53/UDP       Done\n';
    // before: "not a frontend address", exit 2, for a paste whose table was read
    const last = parseCilium(`${head}that is all I see here\n`, 'p.txt');
    assert.deepEqual([last.frontends.length, last.cut], [1, undefined]);
    const between = parseCilium(`${head}that is all I see here\n${dns}`, 'p.txt');
    assert.equal(between.frontends.length, 1);
    assert.deepEqual(between.cut?.[0]?.line, 3);
  });

  it('a listing whose rows are all elided is not said to have no frontend', () => {
    for (const snip of SNIPS) {
      const table = parseCilium(`ID   Frontend   Service Type   Backend\n${snip}\n`, 'p.txt');
      const said = rulesText(table, buildCiliumTrees(table, new Map()), { label: 'p' });
      assert.doesNotMatch(said, /no frontend in the listing|empty/, snip);
      assert.match(said, /not whole \(line 2: rows left out/, snip);
    }
  });
});
