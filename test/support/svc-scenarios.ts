// Derives the `kdebug svc` scenario snapshots from the demo (snapshots/nginx-svc): each one
// breaks one thing the way it breaks in a real cluster (objects, the rules kube-proxy v1.15
// would then write, and what the node probes record), and says so in its README.
// Regenerate: node --import tsx test/support/svc-scenarios.ts
//
// IP conventions (the demo cluster): nodes vm-12-7-centos 10.0.12.7 (Pods 10.244.0.0/24) and
// vm-12-11-centos 10.0.12.11 (Pods 10.244.1.0/24); Pod CIDR 10.244.0.0/16; Service CIDR
// 10.1.0.0/16; nginx-svc 10.1.190.219:8080 -> Pods 10.244.0.3:80, 10.244.1.7:80; kube-dns
// 10.1.0.10 -> CoreDNS 10.244.0.2, 10.244.1.2. Probes are recorded on vm-12-7-centos.
import { dualStackKubeProxy } from './dual-stack-release.js';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { endpointChain, kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import type { Facts, KubeObject } from '../../src/core/model.js';
import { readSnapshot, writeSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { allModes } from './modes.js';

const DEMO = 'snapshots/nginx-svc';
const PROBE_NODE = 'vm-12-7-centos';
const NGINX_IP = '10.1.190.219';
const DNS_IP = '10.1.0.10';
const FQDN = (svc: string) => `${svc}.default.svc.cluster.local`;

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// --- what the probe scripts of cluster/nodes/commands.ts print -----------------------------------

const trailer = (kind: string, tool: string, exit: number) =>
  `kdebug-probe ${kind} tool=${tool} exit=${exit}\n`;
const probe = {
  tcpOk: (ip: string, port: number) =>
    `Connection to ${ip} ${port} port [tcp/*] succeeded!\n${trailer('tcp-connect', 'nc', 0)}`,
  tcpRefused: (ip: string, port: number) =>
    `nc: connect to ${ip} port ${port} (tcp) failed: Connection refused\n${trailer('tcp-connect', 'nc', 1)}`,
  pingLost: (ip: string) =>
    `PING ${ip} (${ip}) 56(84) bytes of data.\n\n--- ${ip} ping statistics ---\n1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n${trailer('icmp-echo', 'ping', 1)}`,
  dig: (name: string, type: string, answers: string[]) =>
    [
      ';; Got answer:',
      `;; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 40522`,
      `;; flags: qr aa rd; QUERY: 1, ANSWER: ${answers.length}, AUTHORITY: 0, ADDITIONAL: 0`,
      ';; WARNING: recursion requested but not available',
      '',
      ';; ANSWER SECTION:',
      ...answers.map((a) => `${name}.\t30\tIN\t${type}\t${a}`),
      '',
      trailer('dns-lookup', 'dig', 0),
    ].join('\n'),
  digRefused: (server: string) =>
    `;; communications error to ${server}#53: connection refused\n;; communications error to ${server}#53: connection refused\n;; no servers could be reached\n\n${trailer('dns-lookup', 'dig', 9)}`,
};

const stem = {
  tcp: (ip: string, port: number) => `tcp-connect_${ip}_${port}`,
  ping: (ip: string) => `icmp-echo_${ip}`,
  dns: (type: string, name: string) => `dns-lookup_${type}_${name}_${DNS_IP}`,
};

// --- editing objects -----------------------------------------------------------------------------

function find(facts: Facts, kind: string, namespace: string, name: string): J {
  const o = facts.objects.find(
    (x) => x.kind === kind && x.metadata?.namespace === namespace && x.metadata?.name === name,
  );
  if (!o) throw new Error(`${kind} ${namespace}/${name} not in the demo`);
  return o as J;
}

function findAll(facts: Facts, kind: string, namespace: string, prefix: string): J[] {
  return facts.objects.filter(
    (x) =>
      x.kind === kind &&
      x.metadata?.namespace === namespace &&
      x.metadata?.name?.startsWith(prefix),
  ) as J[];
}

function slice(facts: Facts, namespace: string, service: string): J {
  const s = facts.objects.find(
    (x) =>
      x.kind === 'EndpointSlice' &&
      x.metadata?.namespace === namespace &&
      x.metadata?.labels?.['kubernetes.io/service-name'] === service,
  );
  if (!s) throw new Error(`no EndpointSlice for ${namespace}/${service}`);
  return s as J;
}

/** A Pod whose container runs but whose readiness probe fails. */
function notReady(pod: J, restarts = 0, crash = false): void {
  const status = pod['status'];
  for (const c of status.conditions)
    if (c.type === 'Ready' || c.type === 'ContainersReady') {
      c.status = 'False';
      c.reason = 'ContainersNotReady';
      c.message = `containers with unready status: [${pod['spec'].containers[0].name}]`;
    }
  const cs = status.containerStatuses[0];
  cs.ready = false;
  cs.restartCount = restarts;
  if (crash) {
    cs.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off 5m0s restarting failed container=${cs.name} pod=${pod['metadata'].name}`,
      },
    };
    cs.lastState = {
      terminated: {
        exitCode: 1,
        reason: 'Error',
        startedAt: '2019-08-22T08:35:02Z',
        finishedAt: '2019-08-22T08:35:04Z',
      },
    };
  }
}

// --- editing rules (kube-proxy v1.15's spelling) ------------------------------------------------

/** Removes a Service port's nat rules and chains; adds the filter REJECT v1.15 writes instead. */
function noEndpointsRules(
  dump: string,
  spn: string,
  proto: string,
  vip: string,
  port: number,
): string {
  const svc = kubeProxyChain('KUBE-SVC', spn, proto);
  const seps = [...dump.matchAll(new RegExp(`^-A ${svc} .*-j (KUBE-SEP-[A-Z2-7]{16})$`, 'gm'))].map(
    (m) => m[1]!,
  );
  const gone = [svc, ...seps];
  const lines = dump.split('\n').filter((l) => {
    if (gone.some((c) => l.startsWith(`:${c} `) || l.startsWith(`-A ${c} `))) return false;
    return !l.includes(`--comment "${spn} cluster IP"`);
  });
  const reject = `-A KUBE-SERVICES -d ${vip}/32 -p ${proto} -m comment --comment "${spn} has no endpoints" -m ${proto} --dport ${port} -j REJECT --reject-with icmp-port-unreachable`;
  // filter's KUBE-SERVICES sorts last of its chains: its rules go right before filter's COMMIT
  const filter = lines.indexOf('*filter');
  const commit = lines.indexOf('COMMIT', filter);
  lines.splice(commit, 0, reject);
  return lines.join('\n');
}

/** Moves a Service port's endpoints to another target port (new KUBE-SEP names, new DNATs). */
function retargetRules(
  dump: string,
  spn: string,
  proto: string,
  ips: string[],
  from: number,
  to: number,
): string {
  let out = dump;
  for (const ip of ips) {
    const old = endpointChain(spn, proto, `${ip}:${from}`);
    const now = endpointChain(spn, proto, `${ip}:${to}`);
    out = out
      .replaceAll(old, now)
      .replaceAll(`--to-destination ${ip}:${from}`, `--to-destination ${ip}:${to}`);
  }
  return out;
}

// --- the scenarios -------------------------------------------------------------------------------

interface Scenario {
  name: string;
  /** The Service `kdebug svc` is run on. */
  service: string;
  title: string;
  fault: string;
  expect: string;
  derive(f: Facts): void;
}

const nodes = (f: Facts) => Object.keys(f.nodes);
const record = (f: Facts, outputs: Record<string, string>) =>
  Object.assign((f.nodes[PROBE_NODE] ??= {}), outputs);
const editDumps = (f: Facts, edit: (dump: string) => string) => {
  for (const n of nodes(f)) f.nodes[n]!['iptables-save'] = edit(f.nodes[n]!['iptables-save']!);
};

/** The probes of a healthy nginx-svc, from vm-12-7-centos. */
const healthyProbes = (): Record<string, string> => ({
  [stem.tcp(NGINX_IP, 8080)]: probe.tcpOk(NGINX_IP, 8080),
  [stem.tcp('10.244.0.3', 80)]: probe.tcpOk('10.244.0.3', 80),
  [stem.tcp('10.244.1.7', 80)]: probe.tcpOk('10.244.1.7', 80),
  [stem.ping(NGINX_IP)]: probe.pingLost(NGINX_IP),
  [stem.dns('A', FQDN('nginx-svc'))]: probe.dig(FQDN('nginx-svc'), 'A', [NGINX_IP]),
});

// --- dual-stack -----------------------------------------------------------------------------------

const NGINX_IP6 = 'fd00:10:96::be';
/** The dual-stack scenario's kube-proxy: a release kdebug models, whose rules it writes in both
 * families (the demo's v1.15 proxies IPv4 only). */
const DUAL_STACK_RELEASE = 'v1.30.2';
/** Each IPv4 address of the demo with its IPv6 twin in the cluster's IPv6 ranges. */
const TWIN: Record<string, string> = {
  '10.244.0.3': 'fd00:10:244::3',
  '10.244.1.7': 'fd00:10:244:1::7',
  '10.0.12.7': 'fd00:10:0:12::7',
  '10.0.12.11': 'fd00:10:0:12::11',
};

/** The demo made dual-stack: nginx-svc, its Pods and the nodes get their IPv6 half, with the
 * IPv6 EndpointSlice; kube-proxy runs DUAL_STACK_RELEASE, and each node holds the iptables-save
 * and ip6tables-save its two proxiers write (the demo's v1.15 rules would be another release's). */
function dualStack(f: Facts): void {
  const svc = find(f, 'Service', 'default', 'nginx-svc');
  svc['spec'].clusterIPs = [NGINX_IP, NGINX_IP6];
  svc['spec'].ipFamilies = ['IPv4', 'IPv6'];
  svc['spec'].ipFamilyPolicy = 'PreferDualStack';
  for (const pod of findAll(f, 'Pod', 'default', 'nginx-')) {
    const ip = pod['status'].podIP as string;
    pod['status'].podIPs = [{ ip }, { ip: TWIN[ip] }];
  }
  for (const node of f.objects.filter((o) => o.kind === 'Node') as J[]) {
    const v4 = (node['status'].addresses as { type: string; address: string }[]).find(
      (a) => a.type === 'InternalIP',
    )!.address;
    node['status'].addresses.push({ type: 'InternalIP', address: TWIN[v4] });
    node['spec'].podCIDRs = [
      node['spec'].podCIDR,
      v4.endsWith('.7') ? 'fd00:10:244::/64' : 'fd00:10:244:1::/64',
    ].filter(Boolean);
  }
  dualStackKubeProxy(f.objects, DUAL_STACK_RELEASE);
  const cm = find(f, 'ConfigMap', 'kube-system', 'kube-proxy');
  cm['data']['config.conf'] = cm['data']['config.conf'].replace(
    'clusterCIDR: 10.244.0.0/16',
    'clusterCIDR: 10.244.0.0/16,fd00:10:244::/56',
  );
  const v6 = structuredClone(slice(f, 'default', 'nginx-svc'));
  v6['metadata'] = {
    ...v6['metadata'],
    name: 'nginx-svc-v6x4q',
    uid: 'a6f0c1de-0000-4c6b-9d1e-dual0000v6',
  };
  v6['addressType'] = 'IPv6';
  for (const e of v6['endpoints']) e.addresses = [TWIN[e.addresses[0]]];
  f.objects.push(v6 as KubeObject);
  // both families' rules from the objects as they stand, before either dump is replaced
  const analysis = new Analysis(f, { code: allModes });
  const saves = nodes(f).map((n) => {
    const node = analysis.node(n);
    // as the node's iptables-save prints it: kdebug's own header and notes are not in a dump
    const save = (family: 'IPv4' | 'IPv6') =>
      expectedSave(node.expected(undefined, { family }))
        .split('\n')
        .filter((l) => !l.startsWith('# '))
        .join('\n');
    return [n, save('IPv4'), save('IPv6')] as const;
  });
  for (const [n, v4, v6] of saves) {
    f.nodes[n]!['iptables-save'] = v4;
    f.nodes[n]!['ip6tables-save'] = v6;
  }
}

const SCENARIOS: Scenario[] = [
  {
    name: 'selector-typo',
    service: 'nginx-svc',
    title: 'a typo in the Service selector: no endpoints',
    fault:
      'The Service selects `app=ngnix` (a typo); the Pods are labelled `app=nginx`. The endpoint controller finds no Pods, so the EndpointSlice is empty and kube-proxy v1.15 replaces the Service chains with a filter REJECT rule on both nodes.',
    expect:
      'step 3 Selector fails with `selector-matches-no-pods`, naming the nearest miss (`app=nginx`) and the patch that fixes it; Endpoints and Reachability warn as consequences.',
    derive(f) {
      find(f, 'Service', 'default', 'nginx-svc')['spec'].selector = { app: 'ngnix' };
      const s = slice(f, 'default', 'nginx-svc');
      s['endpoints'] = [];
      s['ports'] = null;
      find(f, 'Endpoints', 'default', 'nginx-svc')['subsets'] = null;
      editDumps(f, (d) => noEndpointsRules(d, 'default/nginx-svc:http', 'tcp', NGINX_IP, 8080));
      record(f, {
        [stem.tcp(NGINX_IP, 8080)]: probe.tcpRefused(NGINX_IP, 8080),
        [stem.ping(NGINX_IP)]: probe.pingLost(NGINX_IP),
        [stem.dns('A', FQDN('nginx-svc'))]: probe.dig(FQDN('nginx-svc'), 'A', [NGINX_IP]),
      });
    },
  },
  {
    name: 'target-port-wrong',
    service: 'nginx-svc',
    title: 'targetPort points where nothing listens',
    fault:
      'The Service sends 8080 to `targetPort: 8080`, but nginx listens on (and declares) port 80. The endpoints exist and are ready (the readiness probe checks port 80), kube-proxy DNATs to 10.244.0.3:8080 and 10.244.1.7:8080, and every connection is refused by the Pods.',
    expect:
      'step 2 Ports fails with `target-port-not-exposed` (the Pods declare 80; the probes to :8080 were refused); Reachability warns with `endpoint-unreachable` and `clusterip-unreachable` as consequences.',
    derive(f) {
      find(f, 'Service', 'default', 'nginx-svc')['spec'].ports[0].targetPort = 8080;
      slice(f, 'default', 'nginx-svc')['ports'][0].port = 8080;
      find(f, 'Endpoints', 'default', 'nginx-svc')['subsets'][0].ports[0].port = 8080;
      editDumps(f, (d) =>
        retargetRules(d, 'default/nginx-svc:http', 'tcp', ['10.244.0.3', '10.244.1.7'], 80, 8080),
      );
      record(f, {
        [stem.tcp(NGINX_IP, 8080)]: probe.tcpRefused(NGINX_IP, 8080),
        [stem.tcp('10.244.0.3', 8080)]: probe.tcpRefused('10.244.0.3', 8080),
        [stem.tcp('10.244.1.7', 8080)]: probe.tcpRefused('10.244.1.7', 8080),
        [stem.ping(NGINX_IP)]: probe.pingLost(NGINX_IP),
        [stem.dns('A', FQDN('nginx-svc'))]: probe.dig(FQDN('nginx-svc'), 'A', [NGINX_IP]),
      });
    },
  },
  {
    name: 'pods-not-ready',
    service: 'nginx-svc',
    title: 'the readiness probe fails on every Pod',
    fault:
      'The nginx Pods run, but their readiness probe asks for `/healthz`, which nginx answers with 404. Both Pods stay not ready, the EndpointSlice lists them with `ready: false`, and kube-proxy v1.15 writes a REJECT rule instead of the Service chains.',
    expect:
      'step 4 Endpoints fails with one `endpoint-not-ready` per Pod, saying the readiness probe (httpGet /healthz on port 80) is failing, the cause; `no-ready-endpoints` follows from it (a warning); the Pods answer on port 80 directly, the ClusterIP is refused (a consequence).',
    derive(f) {
      for (const pod of findAll(f, 'Pod', 'default', 'nginx-')) {
        pod['spec'].containers[0].readinessProbe.httpGet.path = '/healthz';
        notReady(pod);
      }
      for (const e of slice(f, 'default', 'nginx-svc')['endpoints'])
        e.conditions = { ready: false, serving: false, terminating: false };
      const ep = find(f, 'Endpoints', 'default', 'nginx-svc')['subsets'][0];
      ep.notReadyAddresses = ep.addresses;
      delete ep.addresses;
      editDumps(f, (d) => noEndpointsRules(d, 'default/nginx-svc:http', 'tcp', NGINX_IP, 8080));
      record(f, {
        [stem.tcp(NGINX_IP, 8080)]: probe.tcpRefused(NGINX_IP, 8080),
        [stem.tcp('10.244.0.3', 80)]: probe.tcpOk('10.244.0.3', 80),
        [stem.tcp('10.244.1.7', 80)]: probe.tcpOk('10.244.1.7', 80),
        [stem.ping(NGINX_IP)]: probe.pingLost(NGINX_IP),
        [stem.dns('A', FQDN('nginx-svc'))]: probe.dig(FQDN('nginx-svc'), 'A', [NGINX_IP]),
      });
    },
  },
  {
    name: 'coredns-down',
    service: 'nginx-svc',
    title: 'CoreDNS crash-loops: no name resolves',
    fault:
      'Both CoreDNS Pods are in CrashLoopBackOff (exit code 1, 14 restarts), so kube-dns has no ready endpoints and kube-proxy v1.15 rejects 10.1.0.10:53. nginx-svc itself is healthy: its ClusterIP and Pods answer, but its name does not resolve.',
    expect:
      'step 5 DNS fails with `coredns-unavailable`; the recorded lookup of nginx-svc.default.svc.cluster.local was refused (`dns-answer-wrong`, a warning that follows from it). Every other step passes.',
    derive(f) {
      for (const pod of findAll(f, 'Pod', 'kube-system', 'coredns-')) notReady(pod, 14, true);
      for (const e of slice(f, 'kube-system', 'kube-dns')['endpoints'])
        e.conditions = { ready: false, serving: false, terminating: false };
      for (const subset of find(f, 'Endpoints', 'kube-system', 'kube-dns')['subsets']) {
        subset.notReadyAddresses = subset.addresses;
        delete subset.addresses;
      }
      editDumps(f, (d) =>
        [
          ['dns', 'udp', 53],
          ['dns-tcp', 'tcp', 53],
          ['metrics', 'tcp', 9153],
        ].reduce(
          (x, [name, proto, port]) =>
            noEndpointsRules(
              x,
              `kube-system/kube-dns:${name}`,
              proto as string,
              DNS_IP,
              port as number,
            ),
          d,
        ),
      );
      record(f, {
        ...healthyProbes(),
        [stem.dns('A', FQDN('nginx-svc'))]: probe.digRefused(DNS_IP),
      });
    },
  },
  {
    name: 'headless',
    service: 'nginx-headless',
    title: 'a headless Service (no fault)',
    fault:
      'No fault. `nginx-headless` (clusterIP: None) selects the two nginx Pods. kube-proxy writes no rules for it; cluster DNS answers its name with the two Pod IPs, and clients connect to the Pods directly.',
    expect:
      'no step fails: step 1 says it is headless, the kube-proxy, Rules, Traffic policy and Hairpin steps are skipped, DNS expects and finds the two Pod IPs, and the Pods answer directly.',
    derive(f) {
      const svc = structuredClone(find(f, 'Service', 'default', 'nginx-svc')) as J;
      svc['metadata'] = {
        name: 'nginx-headless',
        namespace: 'default',
        uid: '0d1e2f30-4152-4637-8899-aabbccddeeff',
        creationTimestamp: '2019-08-21T07:02:11Z',
        resourceVersion: '123001',
      };
      svc['spec'] = {
        clusterIP: 'None',
        ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }],
        selector: { app: 'nginx' },
        sessionAffinity: 'None',
        type: 'ClusterIP',
      };
      const sl = structuredClone(slice(f, 'default', 'nginx-svc')) as J;
      sl['metadata'].name = 'nginx-headless-x2k9d';
      sl['metadata'].generateName = 'nginx-headless-';
      sl['metadata'].labels['kubernetes.io/service-name'] = 'nginx-headless';
      sl['metadata'].labels['service.kubernetes.io/headless'] = '';
      sl['metadata'].ownerReferences[0].name = 'nginx-headless';
      const ep = structuredClone(find(f, 'Endpoints', 'default', 'nginx-svc')) as J;
      ep['metadata'].name = 'nginx-headless';
      ep['metadata'].labels = { 'service.kubernetes.io/headless': '' };
      f.objects.push(svc as KubeObject, sl as KubeObject, ep as KubeObject);
      record(f, {
        [stem.tcp('10.244.0.3', 80)]: probe.tcpOk('10.244.0.3', 80),
        [stem.tcp('10.244.1.7', 80)]: probe.tcpOk('10.244.1.7', 80),
        [stem.dns('A', FQDN('nginx-headless'))]: probe.dig(FQDN('nginx-headless'), 'A', [
          '10.244.1.7',
          '10.244.0.3',
        ]),
      });
    },
  },
  {
    name: 'external-name',
    service: 'payments-api',
    title: 'an ExternalName Service (no fault)',
    fault:
      'No fault. `payments-api` is an ExternalName Service for `api.payments.example.com`: cluster DNS answers its name with a CNAME, and there are no endpoints, no selector and no kube-proxy rules.',
    expect:
      'no step fails: step 1 says it is an alias for api.payments.example.com, DNS expects and finds the CNAME, and every step about Pods, endpoints and rules is skipped.',
    derive(f) {
      f.objects.push({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'payments-api',
          namespace: 'default',
          uid: '7a8b9c0d-1e2f-4a3b-9c4d-5e6f7a8b9c0d',
          creationTimestamp: '2019-08-21T09:15:00Z',
          resourceVersion: '124410',
        },
        spec: {
          externalName: 'api.payments.example.com',
          sessionAffinity: 'None',
          type: 'ExternalName',
        },
        status: { loadBalancer: {} },
      });
      record(f, {
        [stem.dns('CNAME', FQDN('payments-api'))]: probe.dig(FQDN('payments-api'), 'CNAME', [
          'api.payments.example.com.',
        ]),
      });
    },
  },
  {
    name: 'dual-stack-ipv6-rules-missing',
    service: 'nginx-svc',
    title: 'a dual-stack Service that works on IPv4 and not on IPv6 from one node',
    fault:
      'nginx-svc is dual-stack (10.1.190.219 and fd00:10:96::be), its Pods have an address in each family. On vm-12-11-centos the IPv6 proxier of kube-proxy failed its last sync: its ip6tables rules have nothing for nginx-svc (no KUBE-SERVICES entry, no KUBE-SVC or KUBE-SEP chains), while its iptables (IPv4) rules are complete and vm-12-7-centos is fine in both families.',
    expect:
      'step 7 Rules fails with `service-rules-missing` for IPv6 on vm-12-11-centos, the finding starting with `IPv6:`; IPv4 matches on both nodes, IPv6 on vm-12-7-centos; DNS has the A and the AAAA record; both ClusterIPs answer from vm-12-7-centos.',
    derive(f) {
      dualStack(f);
      // vm-12-11-centos: the IPv6 rules of nginx-svc gone, the chains with them
      const broken = 'vm-12-11-centos';
      const dump = f.nodes[broken]!['ip6tables-save']!;
      const chains = new Set(
        [...dump.matchAll(/^-A (KUBE-(?:SVC|SEP)-\w+) .*default\/nginx-svc:http/gm)].map(
          (m) => m[1]!,
        ),
      );
      f.nodes[broken]!['ip6tables-save'] = dump
        .split('\n')
        .filter(
          (l) =>
            !l.includes('default/nginx-svc:http') &&
            ![...chains].some((c) => l.startsWith(`:${c} `) || l.startsWith(`-A ${c} `)),
        )
        .join('\n');
      record(f, {
        ...healthyProbes(),
        [stem.tcp(NGINX_IP6, 8080)]: probe.tcpOk(NGINX_IP6, 8080),
        [stem.tcp(TWIN['10.244.0.3']!, 80)]: probe.tcpOk(TWIN['10.244.0.3']!, 80),
        [stem.tcp(TWIN['10.244.1.7']!, 80)]: probe.tcpOk(TWIN['10.244.1.7']!, 80),
        [stem.dns('AAAA', FQDN('nginx-svc'))]: probe.dig(FQDN('nginx-svc'), 'AAAA', [NGINX_IP6]),
      });
    },
  },
];

function readme(s: Scenario): string {
  return `# Scenario: ${s.title}

Derived from the demo snapshot (\`snapshots/nginx-svc\`) by \`test/support/svc-scenarios.ts\`;
regenerate with \`node --import tsx test/support/svc-scenarios.ts\`.

**The fault.** ${s.fault}

**What \`kdebug svc ${s.service} --snapshot snapshots/${s.name}\` finds.** ${s.expect}

Probe results (\`nodes/${PROBE_NODE}/tcp-connect_*.txt\`, \`icmp-echo_*.txt\`, \`dns-lookup_*.txt\`) are
what the probe scripts of \`src/cluster/nodes/commands.ts\` print on a node in that state. The
golden output is in \`test/golden/svc/${s.name}.txt\` and \`.json\`.
`;
}

/** The demo without its probe results: a scenario records its own, on PROBE_NODE only (the
 * demo's would say the healthy Service answered). */
function withoutProbes(f: Facts): Facts {
  const probeOutput = /^(tcp-connect|icmp-echo|dns-lookup)_/;
  for (const outputs of Object.values(f.nodes))
    for (const name of Object.keys(outputs)) if (probeOutput.test(name)) delete outputs[name];
  return f;
}

export const SVC_SCENARIOS = SCENARIOS.map(({ name, service }) => ({ name, service }));

/** Writes every scenario snapshot under `root` (the repository's snapshots/ by default). */
export async function writeScenarios(root = 'snapshots', log = console.log): Promise<void> {
  for (const s of SCENARIOS) {
    const facts = withoutProbes(await readSnapshot(DEMO));
    s.derive(facts);
    const { namespace: _ns, service: _svc, note: _note, ...meta } = facts.meta;
    facts.meta = {
      ...meta,
      note: `Derived from ${DEMO}: ${s.title}. See README.md.`,
      namespace: 'default',
      service: s.service,
    };
    const dir = join(root, s.name);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    await writeSnapshot(dir, facts);
    await writeFile(join(dir, 'README.md'), readme(s));
    log(`wrote ${dir}`);
  }
}

if (process.argv[1]?.endsWith('svc-scenarios.ts')) await writeScenarios();
