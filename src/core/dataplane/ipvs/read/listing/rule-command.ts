// ipvsadm's rule language: what `ipvsadm-save -n` prints ("-A -t 10.96.0.10:53 -s rr -p 10800",
// "-a -t 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1"), or the same options typed as ipvsadm commands
// after a prompt, in any order as ipvsadm's getopt takes them.
import type { IpvsService } from '../listing.js';

/** The options that name a virtual service, by the protocol each gives it. */
const SERVICE_FLAGS = new Map<string, IpvsService['protocol']>([
  ['-t', 'tcp'],
  ['-u', 'udp'],
  ['--sctp-service', 'sctp'],
  ['-f', 'fwmark'],
]);

/** One command of ipvsadm's rule language, as `ipvsadm-save` prints it or as typed. */
export interface RuleCommand {
  /** -A add, -E edit, -D delete a virtual service; -a add, -e edit, -d delete a real server. */
  op: 'A' | 'E' | 'D' | 'a' | 'e' | 'd';
  protocol: IpvsService['protocol'];
  address: string;
  scheduler?: string;
  persistent?: number;
  server?: string;
  forward?: string;
  weight?: number;
  /** False where the real server was given without its port (ipvsadm then takes the virtual
   * service's; ipvsadm-save always prints it). */
  serverPort?: false;
  /** -6: a firewall-mark service of IPv6. */
  ipv6?: true;
  /** Typed as a command (`ipvsadm -A ...`), not a line of `ipvsadm-save`. */
  typed: boolean;
  /** Options of a saved line not known here (a newer ipvsadm's), with their values: skipped. */
  unknown?: string[];
}

/** ipvsadm's long options, by their short ones. */
const LONG_OPTIONS: Record<string, string> = {
  '--add-service': '-A',
  '--edit-service': '-E',
  '--delete-service': '-D',
  '--add-server': '-a',
  '--edit-server': '-e',
  '--delete-server': '-d',
  '--tcp-service': '-t',
  '--udp-service': '-u',
  '--fwmark-service': '-f',
  '--scheduler': '-s',
  '--persistent': '-p',
  '--real-server': '-r',
  '--weight': '-w',
  '--masquerading': '-m',
  '--gatewaying': '-g',
  '--ipip': '-i',
};

/** A prompt before a typed command: "user@host:~# ", "[root@host ~]# ", "$ ", "# " (a space after
 * a bare "#": "#./ipvsadm" is a script's line commented out), then sudo and a path. */
const TYPED_IPVSADM =
  /^(?:\S*[@:]\S*\s*[$#%]\s*|\[[^\]]*\][$#]\s*|[$#%]\s+)?(?:sudo\s+(?:-\S+\s+)*)?(?:[^\s#$%]*\/)?ipvsadm\s+(.*)$/;

/** The line's command of ipvsadm's rule language (add, edit, delete a virtual or real server),
 * with its options read in any order as ipvsadm's getopt does; undefined for any other line. */
export function ruleCommand(line: string): RuleCommand | undefined {
  const saved = /^-[AEDaed] /.test(line);
  const args = saved ? line : TYPED_IPVSADM.exec(line)?.[1];
  if (!args) return undefined;
  // short options run together as popt takes them ("-At VIP", "-at VIP -r RIP -m"): one each
  const words = args
    .replace(/(?<!\s)\s+#.*$/, '')
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((w) => (/^-[A-Za-z]{2,}$/.test(w) ? [...w.slice(1)].map((c) => `-${c}`) : [w]));
  let op: RuleCommand['op'] | undefined;
  let protocol: IpvsService['protocol'] | undefined;
  let address: string | undefined;
  const c: Partial<RuleCommand> = {};
  for (let k = 0; k < words.length; k++) {
    let w = words[k]!;
    let value: string | undefined;
    const eq = /^(--[\w-]+)=(.*)$/.exec(w);
    if (eq) [w, value] = [eq[1]!, eq[2]!];
    w = LONG_OPTIONS[w] ?? w;
    const next = () => value ?? words[++k];
    if (/^-[AEDaed]$/.test(w)) op = w[1] as RuleCommand['op'];
    else if (SERVICE_FLAGS.has(w)) {
      protocol = SERVICE_FLAGS.get(w);
      address = next();
    } else if (w === '-s') c.scheduler = next();
    else if (w === '-p') {
      // the timeout is optional (300 seconds without it)
      const v = value ?? (/^\d+$/.test(words[k + 1] ?? '') ? words[++k] : undefined);
      c.persistent = Number(v ?? 300);
    } else if (w === '-r') c.server = next();
    else if (w === '-w') c.weight = Number(next());
    else if (w === '-m') c.forward = 'Masq';
    else if (w === '-g') c.forward = 'Route';
    else if (w === '-i') c.forward = 'Tunnel';
    else if (/^-[Mb]$|^--(?:netmask|sched-flags|pe)$/.test(w)) next();
    else if (/^-[xy]$|^--[ul]-threshold$|^--tun-(?:type|port)$/.test(w)) next();
    else if (w === '-6' || w === '--ipv6') c.ipv6 = true;
    else if (/^-o$|^--(?:ops|tun-(?:nocsum|csum|remcsum))$/.test(w)) continue;
    else if (saved && /^-/.test(w)) {
      // ipvsadm-save prints only options ipvsadm takes: a newer one's, its value with it
      const option =
        /^-/.test(words[k + 1] ?? '-') || value !== undefined ? w : `${w} ${words[++k]}`;
      (c.unknown ??= []).push(value !== undefined ? `${w}=${value}` : option);
    } else if (!/^-/.test(w)) return undefined; // prose, or a word ipvsadm would not take
  }
  if (!op || !protocol || !address || !/:|^\d+$/.test(address)) return undefined;
  if (/^[aed]$/.test(op) && !c.server) return undefined;
  // a real server without its port takes the virtual service's (ipvsadm's own default); a port
  // may be a name (`ipvsadm-save` without -n: "10.244.1.4:http-alt")
  const port = /:(\d+)$/.exec(address)?.[1];
  const portless = c.server !== undefined && !/^\[.*\]:[\w-]+$|^[^:]+:[\w-]+$/.test(c.server);
  if (portless) c.serverPort = false;
  if (c.server && port && portless)
    c.server = c.server.includes(':')
      ? `[${c.server.replace(/^\[|\]$/g, '')}]:${port}`
      : `${c.server}:${port}`;
  return { ...c, op, protocol, address, typed: !saved };
}

/** The real server ipvsadm sends the kernel for an add or edit (process_options): its forwarding
 * -g (direct routing) and its weight 1 where not given; with -g or -i, the virtual service's port
 * (a firewall mark's real server keeps its own). The kernel replaces every field on an edit. */
export function ipvsadmDest(command: RuleCommand): {
  server: string;
  forward: string;
  weight: number;
} {
  const forward = command.forward ?? 'Route';
  const port = /:(\d+)$/.exec(command.address)?.[1];
  const server =
    port && command.protocol !== 'fwmark' && (forward === 'Route' || forward === 'Tunnel')
      ? command.server!.replace(/:[\w-]+$/, `:${port}`)
      : command.server!;
  return { server, forward, weight: command.weight ?? 1 };
}
