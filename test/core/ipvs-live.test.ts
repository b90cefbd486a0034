// ipvsadm's and ipset's listings as a real kernel's IPVS printed them (test/fixtures/ipvs-live/,
// recorded in a VM by test/support/ipvs-vm/record.sh), read back against the configuration that
// script wrote: the virtual servers, real servers, weights, schedulers and persistence kdebug must
// find in each view, and no share stated where the view prints no weights (--stats, --rate,
// --thresholds). The expectations are the configuration's, not kdebug's reading. (What each
// release's real kube-proxy programmed in IPVS mode in that VM is test/versions' recordings.)
// IP conventions: Services 10.96.0.0/16 and fd00:10:96::/112, Pods 10.244.0.0/16 and
// fd00:10:244::/48, the node 192.168.0.10 ("node-a" in the guest's /etc/hosts).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseIpsets } from '../../src/core/dataplane/ipvs/read/ipset.js';
import { parseIpvs, type IpvsService } from '../../src/core/dataplane/ipvs/read/listing.js';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import type { ServiceTree } from '../../src/core/dataplane/trees.js';

const DIR = 'test/fixtures/ipvs-live';
const fixture = (name: string) => readFileSync(`${DIR}/${name}`, 'utf8');

/** A virtual server as record.sh adds it, with its real servers and their weights. */
interface Configured {
  protocol: IpvsService['protocol'];
  address: string;
  ipv6?: true;
  scheduler: string;
  persistent?: number;
  realServers: [address: string, weight: number][];
}

const WEB: Configured['realServers'] = [
  ['10.244.1.4:8080', 1],
  ['10.244.2.5:8080', 1],
];
const DNS: Configured['realServers'] = [
  ['10.244.0.2:53', 1],
  ['10.244.0.3:53', 1],
];

/** record.sh's virtual servers. */
const CONFIG: Configured[] = [
  {
    protocol: 'tcp',
    address: '10.96.0.30:80',
    scheduler: 'rr',
    realServers: [...WEB, ['10.244.3.6:8080', 0]],
  },
  { protocol: 'tcp', address: '192.168.0.10:30080', scheduler: 'rr', realServers: WEB },
  { protocol: 'tcp', address: '127.0.0.1:30080', scheduler: 'rr', realServers: WEB },
  {
    protocol: 'tcp',
    address: '10.96.0.20:443',
    scheduler: 'rr',
    persistent: 10800,
    realServers: [
      ['10.244.1.7:8443', 1],
      ['10.244.2.8:8443', 1],
    ],
  },
  { protocol: 'udp', address: '10.96.0.10:53', scheduler: 'rr', realServers: DNS },
  { protocol: 'tcp', address: '10.96.0.10:53', scheduler: 'rr', realServers: DNS },
  { protocol: 'tcp', address: '10.96.0.40:8080', scheduler: 'rr', realServers: [] },
  {
    protocol: 'tcp',
    address: '10.96.0.50:6379',
    scheduler: 'sh',
    realServers: [
      ['10.244.1.9:6379', 1],
      ['10.244.2.10:6379', 1],
    ],
  },
  {
    protocol: 'tcp',
    address: '10.96.0.60:80',
    scheduler: 'wrr',
    realServers: [
      ['10.244.3.11:8080', 3],
      ['10.244.3.12:8080', 1],
    ],
  },
  {
    protocol: 'sctp',
    address: '10.96.0.70:9999',
    scheduler: 'rr',
    realServers: [['10.244.1.13:9999', 1]],
  },
  {
    protocol: 'tcp',
    address: '[fd00:10:96::a]:80',
    scheduler: 'rr',
    realServers: [
      ['[fd00:10:244:1::4]:8080', 1],
      ['[fd00:10:244:2::5]:8080', 1],
    ],
  },
  { protocol: 'fwmark', address: '1481', scheduler: 'rr', realServers: WEB },
  {
    protocol: 'fwmark',
    address: '1481',
    ipv6: true,
    scheduler: 'rr',
    realServers: [['[fd00:10:244:1::4]:8080', 1]],
  },
];

/** How `ipvsadm -L` (no -n) names them: the guest's /etc/hosts and /etc/services (netbase). A
 * firewall mark's real servers keep their numbers: the mark has no protocol to name a port by. */
const HOSTS: Record<string, string> = { '192.168.0.10': 'node-a', '127.0.0.1': 'localhost' };
const PORTS: Record<string, string> = {
  '53': 'domain',
  '80': 'http',
  '443': 'https',
  '6379': 'redis',
  '8080': 'http-alt',
};
const named = (address: string) => {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address)!;
  return `${HOSTS[m[1]!] ?? m[1]}:${PORTS[m[2]!] ?? m[2]}`;
};
const namedConfig = (vs: Configured): Configured =>
  vs.protocol === 'fwmark'
    ? vs
    : {
        ...vs,
        address: named(vs.address),
        realServers: vs.realServers.map(([a, w]) => [named(a), w]),
      };

const key = (s: { protocol: string; address: string; ipv6?: true }) =>
  `${s.protocol} ${s.address}${s.ipv6 ? ' IPv6' : ''}`;
const only = (...keys: string[]) => CONFIG.filter((vs) => keys.includes(key(vs)));

/** One recorded view: which virtual servers it holds and what it prints of each. */
interface View {
  file: string;
  view: 'list' | 'stats' | 'rate' | 'save';
  /** The view prints the scheduler and persistence (not --stats, --rate). */
  scheduler: boolean;
  /** The view prints each real server's weight (not --stats, --rate, --thresholds). */
  weights: boolean;
  /** The view prints the forwarding method (not --persistent-conn, --thresholds). */
  forward: boolean;
  names?: true;
  services?: Configured[];
}

const LIST = { view: 'list', scheduler: true, weights: true, forward: true } as const;
const COUNTERS = { scheduler: false, weights: false, forward: false } as const;
const VIEWS: View[] = [
  { file: 'ipvsadm-Ln.txt', ...LIST },
  { file: 'ipvsadm-L.txt', ...LIST, names: true },
  { file: 'ipvsadm-Ln-exact.txt', ...LIST },
  { file: 'ipvsadm-Ln-sort.txt', ...LIST },
  { file: 'ipvsadm-Ln-persistent-conn.txt', ...LIST, forward: false },
  { file: 'ipvsadm-Ln-thresholds.txt', ...LIST, weights: false, forward: false },
  { file: 'ipvsadm-Ln-stats.txt', view: 'stats', ...COUNTERS },
  { file: 'ipvsadm-Ln-stats-exact.txt', view: 'stats', ...COUNTERS },
  { file: 'ipvsadm-Ln-rate.txt', view: 'rate', ...COUNTERS },
  { file: 'ipvsadm-save-n.txt', ...LIST, view: 'save' },
  // without -n it saves names too: a real server's named port is its port
  { file: 'ipvsadm-save.txt', ...LIST, view: 'save', names: true },
  { file: 'ipvsadm-Ln-t-cluster-ip.txt', ...LIST, services: only('tcp 10.96.0.30:80') },
  { file: 'ipvsadm-Ln-t-persistent.txt', ...LIST, services: only('tcp 10.96.0.20:443') },
  { file: 'ipvsadm-Ln-u-dns.txt', ...LIST, services: only('udp 10.96.0.10:53') },
  { file: 'ipvsadm-Ln-t-ipv6.txt', ...LIST, services: only('tcp [fd00:10:96::a]:80') },
  // -f without -6 is the IPv4 service of the mark
  { file: 'ipvsadm-Ln-f.txt', ...LIST, services: only('fwmark 1481') },
];

/** The tree of a virtual server: a firewall mark's by its id, else the one with its entry. */
function treeOf(trees: ServiceTree[], vs: Configured): ServiceTree | undefined {
  if (vs.protocol === 'fwmark')
    return trees.find((t) => t.id === `FWM ${vs.address}${vs.ipv6 ? ' IPv6' : ''}`);
  const m = /^\[?(.+?)\]?:([\w-]+)$/.exec(vs.address)!;
  const port = /^\d+$/.test(m[2]!) ? Number(m[2]) : undefined;
  return trees.find((t) =>
    t.entries.some(
      (e) =>
        e.protocol === vs.protocol && e.address === m[1] && (port === undefined || e.port === port),
    ),
  );
}

const sorted = <T>(xs: T[]) => [...xs].sort();

describe('ipvsadm on a real kernel (test/fixtures/ipvs-live): every view read as configured', () => {
  for (const v of VIEWS)
    it(v.file, () => {
      const want = (v.services ?? CONFIG).map((vs) => (v.names ? namedConfig(vs) : vs));
      const table = parseIpvs(fixture(v.file), v.file);
      assert.equal(table.view, v.view);
      assert.equal(table.names, v.names === true, 'names');
      assert.deepEqual(sorted(table.services.map(key)), sorted(want.map(key)));
      for (const vs of want) {
        const got = table.services.find((s) => key(s) === key(vs))!;
        assert.equal(got.scheduler, v.scheduler ? vs.scheduler : undefined, key(vs));
        assert.equal(got.persistent, v.scheduler ? vs.persistent : undefined, key(vs));
        assert.equal(got.partial, undefined, key(vs));
        assert.deepEqual(
          sorted(got.realServers.map((r) => `${r.address} ${r.weight} ${r.forward}`)),
          sorted(
            vs.realServers.map(
              ([a, w]) => `${a} ${v.weights ? w : undefined} ${v.forward ? 'Masq' : undefined}`,
            ),
          ),
          key(vs),
        );
      }
      // the same text as a paste: the Service trees, their shares and affinity
      const paste = readPaste(fixture(v.file), { file: v.file });
      assert.equal(paste.mode, 'ipvs');
      const trees = paste.mode === 'ipvs' ? paste.trees.services : [];
      for (const vs of want) {
        const t = treeOf(trees, vs);
        assert.ok(t, `${key(vs)}: no tree`);
        assert.deepEqual(
          sorted(t.endpoints.map((e) => e.address)),
          sorted(vs.realServers.map(([a]) => a)),
          key(vs),
        );
        // record.sh's virtual servers bear no mark of kube-proxy: persistence is said as IPVS's,
        // a Service's session affinity only where the listing shows kube-proxy wrote it
        const persistence =
          t.affinitySeconds ?? /persistent (\d+) s/.exec(t.entries[0]!.label ?? '')?.[1];
        assert.equal(
          persistence === undefined ? undefined : Number(persistence),
          v.scheduler ? vs.persistent : undefined,
          key(vs),
        );
        if (!v.weights)
          // no weights printed: no share stated
          assert.ok(
            t.endpoints.every((e) => e.shareUnknown !== undefined),
            `${key(vs)}: a share stated`,
          );
        else if (vs.scheduler === 'rr' || vs.scheduler === 'wrr') {
          const sum = vs.realServers.reduce((n, [, w]) => n + w, 0);
          assert.deepEqual(
            sorted(t.endpoints.map((e) => `${e.address} ${Math.round(e.probability * 100)}`)),
            sorted(vs.realServers.map(([a, w]) => `${a} ${Math.round((w / sum) * 100)}`)),
            key(vs),
          );
        }
      }
    });
});

describe('ipvsadm on a real kernel: the listings that hold no virtual server', () => {
  const refused = (file: string) =>
    assert.throws(
      () => readPaste(fixture(file), { file }),
      (e: Error) => {
        assert.doesNotMatch(e.message, /iptables/, e.message);
        return true;
      },
    );
  it('ipvsadm -Lnc: its connection entries, named as such', () => {
    assert.throws(() => readPaste(fixture('ipvsadm-Lnc.txt'), { file: 'c' }), /connection/);
    refused('ipvsadm-Lnc.txt');
  });
  it('ipvsadm -Ln --timeout: its one line of timeouts, named as such', () => {
    assert.throws(() => readPaste(fixture('ipvsadm-Ln-timeout.txt'), { file: 't' }), /timeout/);
    refused('ipvsadm-Ln-timeout.txt');
  });
  it('/proc/net/ip_vs: hex addresses and ports, persistence in jiffies: named, not misread', () => {
    assert.throws(
      () => readPaste(fixture('proc-net-ip_vs.txt'), { file: 'p' }),
      /\/proc\/net\/ip_vs.*ipvsadm -Ln/,
    );
    refused('proc-net-ip_vs.txt');
  });
  it('ipvsadm -Ln -t of a virtual server that does not exist: "No such service", exit 1', () => {
    for (const f of ['ipvsadm-Ln-t-missing', 'ipvsadm-Ln-u-missing']) {
      assert.equal(fixture(`${f}.txt`), '');
      assert.equal(fixture(`${f}.stderr`), 'No such service\n');
      assert.equal(fixture(`${f}.rc`), '1\n');
    }
  });
});

describe("kube-proxy's ipsets on a real kernel: ipset list and ipset save read alike", () => {
  const SETS: Record<string, [type: string, entries: string]> = {
    'KUBE-CLUSTER-IP': [
      'hash:ip,port',
      '10.96.0.10,udp:53 10.96.0.10,tcp:53 10.96.0.20,tcp:443 10.96.0.30,tcp:80 10.96.0.40,tcp:8080 10.96.0.50,tcp:6379 10.96.0.60,tcp:80 10.96.0.70,sctp:9999',
    ],
    'KUBE-6-CLUSTER-IP': ['hash:ip,port', 'fd00:10:96::a,tcp:80'],
    'KUBE-LOOP-BACK': [
      'hash:ip,port,ip',
      '10.244.1.4,tcp:8080,10.244.1.4 10.244.2.5,tcp:8080,10.244.2.5 10.244.0.2,udp:53,10.244.0.2',
    ],
    'KUBE-NODE-PORT-TCP': ['bitmap:port', '30080'],
    'KUBE-IPVS-IPS': [
      'hash:ip',
      '10.96.0.10 10.96.0.20 10.96.0.30 10.96.0.40 10.96.0.50 10.96.0.60 10.96.0.70',
    ],
  };
  for (const file of ['ipset-list.txt', 'ipset-save.txt', 'ipset-list-o-save.txt'])
    it(file, () => {
      const sets = parseIpsets(fixture(file), file);
      assert.deepEqual(sorted([...sets.keys()]), sorted(Object.keys(SETS)));
      for (const [name, [type, entries]] of Object.entries(SETS)) {
        assert.equal(sets.get(name)!.type, type, name);
        assert.deepEqual(sorted([...sets.get(name)!.entries]), sorted(entries.split(' ')), name);
      }
    });
});
