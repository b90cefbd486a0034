// What cluster DNS should answer for the Service: the cluster domain, the kube-dns Service, the
// records CoreDNS serves for the Service's names, and the lookups a live run makes on each node.
import { read } from '../../findings/evidence.js';
import type { Service } from '../../kube/objects.js';
import type { CheckContext } from '../context.js';
import type { NodeProbe } from '../reachability/probes.js';

/** The cluster domain Pods search: kubelet's clusterDomain (it writes their resolv.conf), else the
 * first zone of the Corefile's kubernetes plugin, else cluster.local. */
export function clusterDomain(ctx: CheckContext): string {
  return kubeletDomain(ctx) ?? corefileZones(ctx)[0] ?? 'cluster.local';
}

/** The zones the Corefile's kubernetes plugin serves (reverse zones left out), as read. */
export function corefileZones(ctx: CheckContext): string[] {
  const corefile = ctx.view.configMaps.find(
    (c) => c.namespace === 'kube-system' && c.name === 'coredns',
  )?.data['Corefile'];
  const zones =
    kubernetesPlugin(corefile ?? '')
      ?.zones.trim()
      .split(/\s+/) ?? [];
  return zones.filter((z) => !z.endsWith('.arpa')).map((z) => z.replace(/\.$/, ''));
}

/** clusterDomain of kubeadm's kubelet configuration (kube-system/kubelet-config[-1.NN]), as read. */
export function kubeletDomain(ctx: CheckContext): string | undefined {
  const config = ctx.view.configMaps
    .filter((c) => c.namespace === 'kube-system' && /^kubelet-config(?:-\d+\.\d+)?$/.test(c.name))
    .sort((a, b) => b.name.localeCompare(a.name, 'en', { numeric: true }))[0]?.data['kubelet'];
  return /^clusterDomain:\s*"?([a-z0-9.-]+?)\.?"?\s*$/m.exec(config ?? '')?.[1];
}

/** Kubelet's cluster domain (the one Pods search) when the Corefile, read, does not serve it. */
export function zoneMismatch(ctx: CheckContext) {
  const kubelet = kubeletDomain(ctx);
  const served = corefileZones(ctx);
  if (!kubelet || served.length === 0 || served.includes(kubelet)) return undefined;
  return {
    kubelet,
    served,
    evidence: [
      read(`ConfigMap kube-system/coredns: Corefile kubernetes ${served.join(' ')}`),
      read(`kubelet configuration: clusterDomain: ${kubelet}`),
    ],
  };
}

const KUBERNETES_PLUGIN = /^\s*kubernetes\s+([^{\n]+)/;

/** The Corefile's kubernetes plugin line (with the blank lines just above it) and its zones: each
 * line matched on its own (a multiline `^\s*` over the whole Corefile went quadratic on a run of
 * blank lines: 50,000 newlines took 35 s). */
export function kubernetesPlugin(corefile: string): { line: string; zones: string } | undefined {
  const lines = corefile.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = KUBERNETES_PLUGIN.exec(lines[i]!);
    if (!m) continue;
    let start = i;
    while (start > 0 && lines[start - 1]!.trim() === '') start--;
    return { line: [...lines.slice(start, i), m[0]].join('\n'), zones: m[1]! };
  }
  return undefined;
}

export function kubeDnsService(ctx: CheckContext): Service | undefined {
  return (
    ctx.view.services.find((s) => s.namespace === 'kube-system' && s.name === 'kube-dns') ??
    ctx.view.services.find(
      (s) => s.namespace === 'kube-system' && s.raw.metadata?.labels?.['k8s-app'] === 'kube-dns',
    )
  );
}

export interface Expected {
  name: string;
  type: 'A' | 'AAAA' | 'CNAME' | 'SRV';
  /** The answers CoreDNS should give; empty for NXDOMAIN. */
  answers: string[];
}

/** The records the Service should have, FQDN first. */
export function expectedRecords(ctx: CheckContext, svc: Service, domain: string): Expected[] {
  const fqdn = `${svc.name}.${svc.namespace}.svc.${domain}`;
  if (svc.type === 'ExternalName')
    return [{ name: fqdn, type: 'CNAME', answers: [`${svc.externalName}.`] }];
  const eps = ctx.endpointAddresses().filter((e) => e.ready || svc.publishNotReadyAddresses);
  // one address record per family the Service has: A for IPv4, AAAA for IPv6
  const addresses = svc.headless ? eps.map((e) => e.ip).sort() : svc.clusterIPs;
  const v4 = addresses.filter((ip) => !ip.includes(':'));
  const v6 = addresses.filter((ip) => ip.includes(':'));
  const out: Expected[] = [
    ...(v4.length > 0 || v6.length === 0 ? [{ name: fqdn, type: 'A' as const, answers: v4 }] : []),
    ...(v6.length > 0 ? [{ name: fqdn, type: 'AAAA' as const, answers: v6 }] : []),
  ];
  if (svc.headless) {
    const slicesHost = ctx
      .slices()
      .flatMap((s) =>
        s.endpoints.filter(
          (e) => e.hostname && (e.conditions.ready || svc.publishNotReadyAddresses),
        ),
      );
    for (const e of slicesHost)
      out.push({
        name: `${e.hostname}.${fqdn}`,
        type: e.addresses[0]!.includes(':') ? 'AAAA' : 'A',
        answers: [e.addresses[0]!],
      });
  }
  for (const p of svc.ports.filter((x) => x.name)) {
    // headless: one SRV per endpoint, to its hostname or dashed IP, with CoreDNS's even weights
    const targets = svc.headless
      ? ctx
          .endpoints(p)
          .filter((e) => e.ready || svc.publishNotReadyAddresses)
          .map((e) => ({
            port: e.port,
            host: `${e.hostname ?? e.ip.replace(/\./g, '-')}.${fqdn}.`,
          }))
      : [{ port: p.port, host: `${fqdn}.` }];
    const weight = Math.floor(100 / Math.max(1, targets.length));
    out.push({
      name: `_${p.name}._${p.protocol.toLowerCase()}.${fqdn}`,
      type: 'SRV',
      answers: targets.map((t) => `0 ${weight} ${t.port} ${t.host}`),
    });
  }
  return out;
}
/** The lookups a live run makes on each node (diagnose's probePlan): the Service's own name
 * against kube-dns, one record per family it has (a headless Service's from its endpoints), a
 * CNAME for ExternalName. What a node did not record of these, it did not observe. */
export function plannedLookups(ctx: CheckContext): (NodeProbe & { kind: 'dns-lookup' })[] {
  const svc = ctx.service;
  const dns = kubeDnsService(ctx);
  if (!svc || !dns?.clusterIP || dns.clusterIP === 'None') return [];
  const name = `${svc.name}.${svc.namespace}.svc.${clusterDomain(ctx)}`;
  const addresses = svc.headless
    ? svc.ports.flatMap((p) => ctx.endpoints(p).map((e) => e.ip))
    : svc.clusterIPs;
  const v6 = addresses.some((ip) => ip.includes(':'));
  const v4 = addresses.some((ip) => !ip.includes(':'));
  const types: ('A' | 'AAAA' | 'CNAME')[] =
    svc.type === 'ExternalName'
      ? ['CNAME']
      : [...(v4 || !v6 ? ['A' as const] : []), ...(v6 ? ['AAAA' as const] : [])];
  return types.map((type) => ({ kind: 'dns-lookup', name, server: dns.clusterIP!, type }));
}
