// The probes the diagnosis reads, and the file stem each one's stdout is recorded under
// (`nodes/<node>/<stem>.txt`). The shapes are the probe members of cluster.ts's NodeCommand and
// the stems are commandStem()'s: core may not import cluster/, a test keeps the two equal.

export type Probe =
  | { kind: 'tcp-connect'; ip: string; port: number }
  | { kind: 'udp-probe'; ip: string; port: number }
  | { kind: 'icmp-echo'; ip: string }
  | { kind: 'dns-lookup'; name: string; server: string; type: 'A' | 'AAAA' | 'SRV' | 'CNAME' };

export function probeStem(p: Probe): string {
  switch (p.kind) {
    case 'tcp-connect':
    case 'udp-probe':
      return `${p.kind}_${p.ip}_${p.port}`;
    case 'icmp-echo':
      return `icmp-echo_${p.ip}`;
    case 'dns-lookup':
      return `dns-lookup_${p.type}_${p.name}_${p.server}`;
  }
}

/** A connect probe of the right protocol for a Service port (SCTP is not probed). */
export function connectProbe(ip: string, port: number, protocol: string): Probe | undefined {
  if (protocol === 'TCP') return { kind: 'tcp-connect', ip, port };
  if (protocol === 'UDP') return { kind: 'udp-probe', ip, port };
  return undefined;
}

/** How a probe reads in evidence: "TCP connect 10.1.190.219:8080". */
export function probeText(p: Probe): string {
  switch (p.kind) {
    case 'tcp-connect':
      return `TCP connect ${p.ip}:${p.port}`;
    case 'udp-probe':
      return `UDP probe ${p.ip}:${p.port}`;
    case 'icmp-echo':
      return `ping ${p.ip}`;
    case 'dns-lookup':
      return `DNS ${p.type} ${p.name} @${p.server}`;
  }
}
