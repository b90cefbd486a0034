// The settings the agent itself says it runs with, read from its `cilium-dbg status --verbose`.
import type { CiliumSettings } from './agent.js';
import type { StatusSetting } from './provenance.js';

type Said = Partial<Pick<CiliumSettings, StatusSetting>> & {
  version?: string;
  /** The Pod ranges its IPAM allocates from on this node ("IPAM: IPv4: 6/254 allocated from
   * 10.244.1.0/24, IPv6: ..."). */
  podCIDRs?: string[];
  /** The field each setting said was read from ("Socket LB", "Backend Selection"): an older
   * status prints fewer, and a setting it did not print is no setting it said. */
  fields: StatusFields;
};

export type StatusFields = Partial<Record<StatusSetting, string>>;

/** `cilium-dbg status --verbose`: "KubeProxyReplacement:  True  [eth0 ...]", then its details
 * ("Socket LB: Enabled", "Socket LB Coverage: Hostns-only", "Mode: SNAT", "Backend Selection:
 * Random", "Session Affinity: Enabled", "- NodePort: Enabled (Range: 30000-32767)");
 * "Cilium: Ok 1.16.5 (v1.16.5-...)". */
export function fromStatus(text: string): Said {
  const field = (name: string) => new RegExp(`^\\s*${name}:\\s+(.+?)\\s*$`, 'mi').exec(text)?.[1];
  const on = (v: string | undefined) =>
    v === undefined ? undefined : /^(true|enabled|strict)\b/i.test(v);
  const fields: StatusFields = {};
  const out: Said = { fields };
  // the details' own Status where the summary line is not in the text (a quote of the details)
  const summary = field('KubeProxyReplacement');
  const kpr =
    summary ??
    /^[ \t]*KubeProxyReplacement Details:[ \t]*\n[ \t]+Status:[ \t]+(\S+)/m.exec(text)?.[1];
  if (kpr !== undefined) {
    out.kubeProxyReplacement = on(kpr)!;
    fields.kubeProxyReplacement =
      summary !== undefined ? 'KubeProxyReplacement' : 'KubeProxyReplacement Details: Status';
  }
  const sock = field('Socket LB');
  if (sock !== undefined) [out.socketLB, fields.socketLB] = [on(sock)!, 'Socket LB'];
  const coverage = field('Socket LB Coverage');
  if (coverage !== undefined)
    [out.hostnsOnly, fields.hostnsOnly] = [/hostns/i.test(coverage), 'Socket LB Coverage'];
  const mode = field('Mode');
  if (mode) [out.forwarding, fields.forwarding] = [mode.split(/\s/)[0]!.toLowerCase(), 'Mode'];
  const selection = field('Backend Selection');
  if (selection)
    [out.algorithm, fields.algorithm] = [
      selection.split(/\s/)[0]!.toLowerCase(),
      'Backend Selection',
    ];
  const affinity = field('Session Affinity');
  if (affinity !== undefined)
    [out.sessionAffinity, fields.sessionAffinity] = [on(affinity)!, 'Session Affinity'];
  const range = /^\s*-?\s*NodePort:\s+Enabled \(Range: (\d+)-(\d+)\)/m.exec(text);
  if (range)
    [out.nodePortRange, fields.nodePortRange] = [
      [Number(range[1]), Number(range[2])],
      'Services: NodePort',
    ];
  const version = /^Cilium:\s+\S+\s+(\d+\.\d+\.\d+\S*)/m.exec(text)?.[1];
  if (version) out.version = `v${version.replace(/^v/, '')}`;
  const ipam = field('IPAM');
  const pools = [...(ipam ?? '').matchAll(/allocated from ([0-9a-fA-F.:]+\/\d+)/g)].map(
    (m) => m[1]!,
  );
  if (pools.length > 0) out.podCIDRs = pools;
  return out;
}
