// IPVS mode's virtual servers as `ipvsadm -Ln` lists them, or as `ipvsadm-save -n` saves them:
// each virtual server (protocol, address, port or firewall mark, scheduler, persistence) with its
// real servers (address, forwarding, weight, connections). Lines around a paste (a prompt, the
// command) are skipped and named; a line inside the listing kdebug cannot place is FILE:LINE.
import { escapeControls } from '../sanitize.js';

export interface IpvsRealServer {
  /** "10.244.1.4:80", IPv6 as "[fd00::4]:80". */
  address: string;
  /** Masq (NAT), Route (DR), Tunnel. */
  forward: string;
  weight: number;
  activeConn?: number;
  inActConn?: number;
  line: number;
}

export interface IpvsService {
  protocol: 'tcp' | 'udp' | 'sctp' | 'fwmark';
  /** "10.96.0.10:53", IPv6 as "[fd00::a]:53"; a firewall mark's number as text. */
  address: string;
  scheduler: string;
  /** Persistence timeout, seconds (session affinity). */
  persistent?: number;
  realServers: IpvsRealServer[];
  line: number;
}

export interface IpvsTable {
  kind: 'ipvs';
  services: IpvsService[];
  /** Lines outside the listing that were skipped (a prompt, the command), 1-based. */
  skipped: number[];
}

/** An IPVS-mode listing (ipvsadm's, or kube-proxy's ipsets) that does not read, with where. */
export class IpvsParseError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${escapeControls(reason)}`);
    this.name = 'IpvsParseError';
  }
}

/** Does this look like ipvsadm's listing or its save form? */
export const isIpvs = (text: string) =>
  /^IP Virtual Server version /m.test(text.slice(0, 4096)) ||
  /^-A -[tuf] \S+ -s \S+/m.test(text.slice(0, 4096));

const PROTOCOLS: Record<string, IpvsService['protocol']> = {
  TCP: 'tcp',
  UDP: 'udp',
  SCTP: 'sctp',
  FWM: 'fwmark',
  t: 'tcp',
  u: 'udp',
  '-sctp-service': 'sctp',
  f: 'fwmark',
};

export function parseIpvs(text: string, file = '<input>'): IpvsTable {
  const services: IpvsService[] = [];
  const byAddress = new Map<string, IpvsService>();
  const skipped: number[] = [];
  let current: IpvsService | undefined;
  let inListing = false;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const no = i + 1;
    const raw = lines[i]!.replace(/\r$/, '');
    const t = raw.trim();
    if (!t) continue;
    let m: RegExpExecArray | null;
    if (
      /^IP Virtual Server version /.test(t) ||
      /^Prot LocalAddress:Port/.test(t) ||
      /^-> RemoteAddress:Port/.test(t)
    ) {
      inListing = true;
      continue;
    }
    // ipvsadm -Ln: "TCP  10.96.0.10:53 rr persistent 10800" / "  -> 10.244.0.2:53  Masq 1 0 0"
    if ((m = /^(TCP|UDP|SCTP|FWM)\s+(\S+)\s+(\S+)(.*)$/.exec(t))) {
      const persistent = /\bpersistent (\d+)/.exec(m[4]!);
      current = {
        protocol: PROTOCOLS[m[1]!]!,
        address: m[2]!,
        scheduler: m[3]!,
        ...(persistent ? { persistent: Number(persistent[1]) } : {}),
        realServers: [],
        line: no,
      };
      services.push(current);
      byAddress.set(`${current.protocol} ${current.address}`, current);
      inListing = true;
      continue;
    }
    if ((m = /^->\s+(\S+)\s+(\S+)\s+(\d+)(?:\s+(\d+)\s+(\d+))?/.exec(t))) {
      if (!current)
        throw new IpvsParseError(
          file,
          no,
          `a real server before any virtual server: ${t.slice(0, 200)}`,
        );
      current.realServers.push({
        address: m[1]!,
        forward: m[2]!,
        weight: Number(m[3]),
        ...(m[4] !== undefined ? { activeConn: Number(m[4]), inActConn: Number(m[5]) } : {}),
        line: no,
      });
      continue;
    }
    // ipvsadm-save -n: "-A -t 10.96.0.10:53 -s rr -p 10800" / "-a -t 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1"
    if ((m = /^-A -([tuf]|-sctp-service) (\S+)(.*)$/.exec(t))) {
      const s = {
        protocol: PROTOCOLS[m[1]!]!,
        address: m[2]!,
        scheduler: /-s (\S+)/.exec(m[3]!)?.[1] ?? 'wlc',
        ...(/-p (\d+)/.test(m[3]!) ? { persistent: Number(/-p (\d+)/.exec(m[3]!)![1]) } : {}),
        realServers: [],
        line: no,
      };
      services.push(s);
      byAddress.set(`${s.protocol} ${s.address}`, s);
      inListing = true;
      continue;
    }
    if ((m = /^-a -([tuf]|-sctp-service) (\S+) -r (\S+)(.*)$/.exec(t))) {
      const owner = byAddress.get(`${PROTOCOLS[m[1]!]} ${m[2]}`);
      if (!owner)
        throw new IpvsParseError(
          file,
          no,
          `a real server of a virtual server not added before: ${t.slice(0, 200)}`,
        );
      const rest = m[4]!;
      owner.realServers.push({
        address: m[3]!,
        forward: /-g\b/.test(rest) ? 'Route' : /-i\b/.test(rest) ? 'Tunnel' : 'Masq',
        weight: Number(/-w (\d+)/.exec(rest)?.[1] ?? 1),
        line: no,
      });
      continue;
    }
    // ipvsadm's own syntax that does not read is an error; anything else (prose) is skipped
    if (inListing && /^(->|-[aA] )/.test(t))
      throw new IpvsParseError(file, no, `not a line of ipvsadm's listing: ${t.slice(0, 200)}`);
    skipped.push(no);
  }
  return { kind: 'ipvs', services, skipped };
}
