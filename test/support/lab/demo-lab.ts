// The demo cluster (snapshots/nginx-svc) rebuilt in the lab, to record what kdebug's probes
// really print there: the demo's own Service and Pod addresses (ClusterIP 10.1.190.219:8080,
// nginx Pods 10.244.0.3 and 10.244.1.7, kube-dns 10.1.0.10 -> CoreDNS 10.244.0.2 and
// 10.244.1.2), which exist only inside the lab's namespaces, and each node's own iptables-save
// dump loaded with iptables-legacy-restore (iptables 1.4.21 had only that backend). Node IPs
// move to TEST-NET: 10.0.12.7 -> 192.0.2.7, 10.0.12.11 -> 192.0.2.11, in the objects and in
// the one rule that names one (the kubernetes Service's endpoint, 10.0.12.7:6443).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import type { Facts, KubeObject } from '../../../src/core/model.js';
import { ROOT } from '../cli.js';
import { startFakeApi } from '../fake-api/server.js';
import { labExec } from './lab-exec.js';
import type { Lab, LabTopology } from './lab.js';

export const DEMO_DIR = join(ROOT, 'snapshots/nginx-svc');
const NODE_IPS: Record<string, string> = { '10.0.12.7': '192.0.2.7', '10.0.12.11': '192.0.2.11' };

/** The demo's node addresses replaced by the lab's TEST-NET ones. */
export const toLabAddresses = (text: string) =>
  text.replace(/\b10\.0\.12\.(7|11)\b/g, (ip) => NODE_IPS[ip]!);

const dump = (node: string) =>
  toLabAddresses(readFileSync(join(DEMO_DIR, 'nodes', node, 'iptables-save.txt'), 'utf8'));

export function demoTopology(): LabTopology {
  const node = (name: string, ip: string, n: number) => ({
    name,
    ip,
    podCIDR: `10.244.${n}.0/24`,
    gateway: `10.244.${n}.1`,
    sshPort: 22,
    backend: 'legacy' as const,
    rules: { text: dump(name) },
  });
  const pod = (name: string, ns: string, nodeName: string, ip: string, app: 'http' | 'dns') => ({
    name,
    namespace: ns,
    node: nodeName,
    ip,
    port: app === 'http' ? 80 : 53,
    app,
  });
  return {
    nodes: [node('vm-12-7-centos', '192.0.2.7', 0), node('vm-12-11-centos', '192.0.2.11', 1)],
    pods: [
      pod('nginx-55fc968d9-kh24k', 'default', 'vm-12-7-centos', '10.244.0.3', 'http'),
      pod('nginx-55fc968d9-4pddn', 'default', 'vm-12-11-centos', '10.244.1.7', 'http'),
      pod('coredns-5c98db65d4-gtwn8', 'kube-system', 'vm-12-7-centos', '10.244.0.2', 'dns'),
      pod('coredns-5c98db65d4-xmzd5', 'kube-system', 'vm-12-11-centos', '10.244.1.2', 'dns'),
    ],
    services: [
      {
        namespace: 'default',
        name: 'nginx-svc',
        portName: 'http',
        protocol: 'tcp',
        clusterIP: '10.1.190.219',
        port: 8080,
        endpoints: [
          { ip: '10.244.0.3', port: 80 },
          { ip: '10.244.1.7', port: 80 },
        ],
      },
    ],
    clusterCIDR: '10.244.0.0/16',
    dnsRecords: {
      'kubernetes.default.svc.cluster.local': '10.1.0.1',
      'nginx-svc.default.svc.cluster.local': '10.1.190.219',
      'kube-dns.kube-system.svc.cluster.local': '10.1.0.10',
    },
  };
}

/** The demo's objects as the fake API server serves them, node addresses in TEST-NET. */
export async function demoObjects(): Promise<KubeObject[]> {
  const facts = await readSnapshot(DEMO_DIR);
  return JSON.parse(toLabAddresses(JSON.stringify(facts.objects))) as KubeObject[];
}

/** A probe's stdout (the Reachability and DNS steps read these), not a rules dump or a status. */
export const isProbeStem = (stem: string) =>
  /^(tcp-connect|udp-probe|icmp-echo|dns-lookup)_/.test(stem);

/**
 * Runs exactly what `kdebug svc nginx-svc` runs on each node (the built CLI's `snapshot save`,
 * through a debug Pod whose exec runs in the lab) and returns the probes' stdout per node.
 */
export async function captureDemoProbes(lab: Lab): Promise<Facts['nodes']> {
  const fake = await startFakeApi({ objects: await demoObjects(), exec: labExec(lab) });
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-demo-probes-'));
  try {
    const args = [
      'bin/kdebug.js',
      'snapshot',
      'save',
      join(dir, 'snap'),
      '--service',
      'nginx-svc',
      '-n',
      'default',
      '--via',
      'pod',
      '--yes',
      '--kubeconfig',
      fake.kubeconfig({ context: 'kubernetes-admin@kubernetes' }),
    ];
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, args, {
        cwd: ROOT,
        env: { ...process.env, HOME: dir },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    if (r.code !== 0) throw new Error(`kdebug snapshot save failed (${r.code}): ${r.stderr}`);
    const saved = await readSnapshot(join(dir, 'snap'));
    return Object.fromEntries(
      Object.entries(saved.nodes).map(([node, outputs]) => [
        node,
        Object.fromEntries(Object.entries(outputs).filter(([stem]) => isProbeStem(stem))),
      ]),
    );
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
