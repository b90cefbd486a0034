// The fixed argv of every NodeCommand, for each place a command can run. Values from the
// cluster (IPs, ports, DNS names) are validated strictly and only ever passed as separate
// argv elements; the probe scripts are constants that read them as "$1", "$2", "$3".
import type { NodeCommand } from '../cluster.js';
import { listingArgv, type ProcNetFile } from '../../core/nodes/commands.js';
import { InvalidNodeCommandError, validNodeCommand } from './valid-command.js';

/** Where a command runs; each place has its own binaries and privileges. */
export type CommandPlace =
  /** A shell on the node itself (SSH). `sudo` for a non-root user: rules need root. */
  | { kind: 'host'; sudo: boolean }
  /** A privileged hostNetwork debug Pod with the node's `/` at `/host`. */
  | { kind: 'debug-pod' }
  /** The node's kube-proxy container: exec the binary directly, the image may have no shell. */
  | { kind: 'kube-proxy-pod' }
  /** The node's Cilium agent container: its own read-only listings, exec'd directly. */
  | { kind: 'cilium-agent-pod' };

/** The places on the node itself (not inside an agent's image). */
type NodePlace = Exclude<CommandPlace, { kind: 'cilium-agent-pod' }>;

/** Seconds each kind of command may run on the node before `timeout` stops it. */
export const TIME_LIMIT = { rules: 30, addresses: 10, lists: 10, http: 6, probe: 6 } as const;

/** A command that cannot run in a place (e.g. a probe in the kube-proxy image, which has no tools). */
export class UnsupportedCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedCommandError';
  }
}

// Each probe's tool and options, once: the scripts run them, and a failed probe is named by them.
const NC_TCP = ['nc', '-z', '-v', '-w', '3'];
const NC_UDP = ['nc', '-u', '-z', '-v', '-w', '2'];
const PING = ['ping', '-c', '1', '-W', '2'];
const DIG = ['dig', '+time=2', '+tries=1', '+noall', '+comments', '+answer'];
const CURL = ['curl', '-sS', '--max-time', '4'];

// Standard directories first, so the probes find the same tools whoever logs in.
const PATHS = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH';
const have = (tool: string) => `command -v ${tool} >/dev/null 2>&1`;
const trailer = (kind: string) => `echo "kdebug-probe ${kind} tool=$t exit=$?"`;

/**
 * The probe scripts: constants on one line (any login shell parses them), arguments only as
 * positional parameters. Each prints the tool's own output, then `kdebug-probe KIND tool=T exit=N`
 * so the stored stdout alone says how the probe ended (see core/probes.ts).
 */
export const PROBE_SCRIPTS = {
  // $1 ip, $2 port. bash's /dev/tcp is the fallback for nodes without nc.
  'tcp-connect': [
    PATHS,
    `if ${have('nc')}; then t=nc; timeout ${TIME_LIMIT.probe} ${NC_TCP.join(' ')} "$1" "$2" 2>&1`,
    `elif ${have('bash')}; then t=bash; timeout 4 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>&1`,
    `else t=none; echo "neither nc nor bash on this node"; (exit 127); fi`,
    trailer('tcp-connect'),
  ].join('; '),
  // $1 ip, $2 port. UDP has no handshake: only an ICMP port-unreachable proves "closed".
  'udp-probe': [
    PATHS,
    `if ${have('nc')}; then t=nc; timeout ${TIME_LIMIT.probe} ${NC_UDP.join(' ')} "$1" "$2" 2>&1`,
    `else t=none; echo "no nc on this node"; (exit 127); fi`,
    trailer('udp-probe'),
  ].join('; '),
  // $1 ip
  'icmp-echo': [
    PATHS,
    `if ${have('ping')}; then t=ping; timeout ${TIME_LIMIT.probe} ${PING.join(' ')} "$1" 2>&1`,
    `else t=none; echo "no ping on this node"; (exit 127); fi`,
    trailer('icmp-echo'),
  ].join('; '),
  // $1 name, $2 server ip, $3 record type
  'dns-lookup': [
    PATHS,
    `if ${have('dig')}; then t=dig; timeout ${TIME_LIMIT.probe} ${DIG.join(' ')} "@$2" "$1" "$3" 2>&1`,
    `elif ${have('nslookup')}; then t=nslookup; timeout ${TIME_LIMIT.probe} nslookup -type="$3" "$1" "$2" 2>&1`,
    `else t=none; echo "neither dig nor nslookup on this node"; (exit 127); fi`,
    trailer('dns-lookup'),
  ].join('; '),
  // $1 url. The body alone goes to stdout: it is what the snapshot stores.
  http: [
    PATHS,
    `if ${have('curl')}; then exec timeout ${TIME_LIMIT.http} ${CURL.join(' ')} "$1"`,
    `elif ${have('wget')}; then exec timeout ${TIME_LIMIT.http} wget -q -O - -T 4 "$1"`,
    `else echo "neither curl nor wget on this node" >&2; exit 127; fi`,
  ].join('; '),
} as const;

/** kube-proxy's metrics server; it binds to the node's loopback by default. */
export const KUBE_PROXY_METRICS = 'http://127.0.0.1:10249';

const SAVE_BINARY: Record<
  'iptables-save' | 'ip6tables-save',
  Record<'auto' | 'legacy' | 'nft', string>
> = {
  'iptables-save': {
    auto: 'iptables-save',
    legacy: 'iptables-legacy-save',
    nft: 'iptables-nft-save',
  },
  'ip6tables-save': {
    auto: 'ip6tables-save',
    legacy: 'ip6tables-legacy-save',
    nft: 'ip6tables-nft-save',
  },
};

/**
 * The argv that runs `command` in `place`. Validates the command first, so a forged object or a
 * value like "1.2.3.4; rm -rf /" never reaches a node.
 */
export function nodeArgv(command: NodeCommand, place: CommandPlace): string[] {
  const c = validNodeCommand(command);
  // the agent's image runs its own listings and nothing else; they run nowhere else
  if (place.kind === 'cilium-agent-pod') {
    if (c.kind !== 'cilium') throw unsupported(c, place);
    return listingArgv(c);
  }
  switch (c.kind) {
    case 'cilium':
      throw unsupported(c, place);
    case 'iptables-save':
    case 'ip6tables-save': {
      const bin = SAVE_BINARY[c.kind][c.backend];
      const args = c.table ? ['-t', c.table] : [];
      if (place.kind === 'kube-proxy-pod') return [bin, ...args]; // its wrapper picks kube-proxy's backend
      return rootRead(place, bin, args);
    }
    case 'iptables-chain': {
      // -S lists one chain and changes nothing; no -w: iptables before 1.6 takes no seconds
      const bin = `${c.tool}${c.backend === 'auto' ? '' : `-${c.backend}`}`;
      const args = ['-t', c.table ?? 'nat', '-S', c.chain];
      if (place.kind === 'kube-proxy-pod') return [bin, ...args];
      return rootRead(place, bin, args);
    }
    case 'ip-addr':
      if (place.kind === 'kube-proxy-pod') throw unsupported(c, place);
      if (place.kind === 'debug-pod')
        return [
          'timeout',
          `${TIME_LIMIT.addresses}`,
          'chroot',
          '/host',
          '/usr/sbin/ip',
          '-br',
          'addr',
        ];
      return ['/usr/bin/timeout', `${TIME_LIMIT.addresses}`, '/usr/sbin/ip', '-br', 'addr'];
    case 'nft-list':
    case 'ipvs-save':
    case 'ipvs-service': {
      // they only list; kube-proxy's own image has their tools (it programs the node with them)
      const [bin, ...args] = listingArgv(c);
      if (place.kind === 'kube-proxy-pod') return [bin!, ...args];
      return rootRead(place, bin!, args);
    }
    case 'conntrack-list':
    case 'conntrack-stats': {
      // -L and -S only read the table; the rules' root is needed, as for iptables-save
      const args = c.kind === 'conntrack-stats' ? ['-S'] : ['-L', '-p', c.protocol, '-d', c.dst];
      if (place.kind === 'kube-proxy-pod') throw unsupported(c, place);
      return rootRead(place, 'conntrack', args);
    }
    case 'ipset-save': {
      const args = ['list', '-o', 'save'];
      if (place.kind === 'kube-proxy-pod') return ['ipset', ...args];
      return rootRead(place, 'ipset', args);
    }
    case 'ipset-test': {
      // test only asks the kernel whether the set holds the entry
      const args = ['test', c.set, c.entry];
      if (place.kind === 'kube-proxy-pod') return ['ipset', ...args];
      return rootRead(place, 'ipset', args);
    }
    case 'proc-net':
      return procNetRead(place, c.file);
    case 'proxy-mode':
      return script(place, c, 'http', [`${KUBE_PROXY_METRICS}/proxyMode`]);
    case 'proxy-metrics':
      return script(place, c, 'http', [`${KUBE_PROXY_METRICS}/metrics`]);
    case 'proxy-configz':
      // the configuration kube-proxy runs with, as it serves it
      return script(place, c, 'http', [`${KUBE_PROXY_METRICS}/configz`]);
    case 'dns-lookup':
      return script(place, c, 'dns-lookup', [c.name, c.server, c.type]);
    case 'tcp-connect':
    case 'udp-probe':
      return script(place, c, c.kind, [c.ip, `${c.port}`]);
    case 'icmp-echo':
      return script(place, c, 'icmp-echo', [c.ip]);
  }
}

/**
 * The command as a person types it on the node, without the time limit, sudo or chroot kdebug
 * wraps around it: what names a failed read.
 */
export function typedCommand(command: NodeCommand): string[] {
  const c = validNodeCommand(command);
  const metrics = (path: string) => [...CURL, `${KUBE_PROXY_METRICS}/${path}`];
  switch (c.kind) {
    case 'cilium':
      return listingArgv(c);
    case 'ip-addr':
      return ['ip', '-br', 'addr'];
    case 'conntrack-list':
      return ['conntrack', '-L', '-p', c.protocol, '-d', c.dst];
    case 'conntrack-stats':
      return ['conntrack', '-S'];
    case 'proxy-mode':
      return metrics('proxyMode');
    case 'proxy-metrics':
      return metrics('metrics');
    case 'proxy-configz':
      return metrics('configz');
    case 'dns-lookup':
      return [...DIG, `@${c.server}`, c.name, c.type];
    case 'tcp-connect':
      return [...NC_TCP, c.ip, `${c.port}`];
    case 'udp-probe':
      return [...NC_UDP, c.ip, `${c.port}`];
    case 'icmp-echo':
      return [...PING, c.ip];
    default:
      // the kube-proxy image runs the reads bare: the binary and its arguments alone
      return nodeArgv(c, { kind: 'kube-proxy-pod' });
  }
}

// Probes need no root: never sudo; in a debug Pod they use the image's tools on the host network.
function script(
  place: NodePlace,
  c: NodeCommand,
  name: keyof typeof PROBE_SCRIPTS,
  args: string[],
): string[] {
  if (place.kind === 'kube-proxy-pod') throw unsupported(c, place);
  return [
    place.kind === 'host' ? '/bin/sh' : 'sh',
    '-c',
    PROBE_SCRIPTS[name],
    'kdebug-probe',
    ...args,
  ];
}

/** A read that needs root, with the host's binary: through chroot /host in a debug Pod, with
 * sudo -n for a non-root SSH user; bounded by the rules' time limit either way. */
function rootRead(place: NodePlace, bin: string, args: string[]): string[] {
  if (place.kind === 'debug-pod')
    return ['timeout', `${TIME_LIMIT.rules}`, 'chroot', '/host', `/usr/sbin/${bin}`, ...args];
  const command = [`/usr/sbin/${bin}`, ...args];
  const sudo = place.kind === 'host' && place.sudo;
  return [
    '/usr/bin/timeout',
    `${TIME_LIMIT.rules}`,
    ...(sudo ? ['sudo', '-n', ...command] : command),
  ];
}

/** The legacy tables' lists are root's alone (mode 0440); ip_vs_stats anyone may read. */
const ROOT_ONLY: readonly ProcNetFile[] = ['ip_tables_names', 'ip6_tables_names'];

/**
 * `cat /proc/net/FILE`, in the node's network namespace: a debug Pod and the kube-proxy Pod share
 * it (hostNetwork), so their own /proc shows the node's lists, whatever /host mounts.
 */
function procNetRead(place: NodePlace, file: ProcNetFile): string[] {
  const path = `/proc/net/${file}`;
  if (place.kind === 'kube-proxy-pod') return ['cat', path];
  if (place.kind === 'debug-pod') return ['timeout', `${TIME_LIMIT.lists}`, 'cat', path];
  const sudo = place.sudo && ROOT_ONLY.includes(file);
  return [
    '/usr/bin/timeout',
    `${TIME_LIMIT.lists}`,
    ...(sudo ? ['sudo', '-n'] : []),
    '/bin/cat',
    path,
  ];
}

function unsupported(c: NodeCommand, place: CommandPlace): UnsupportedCommandError {
  if (c.kind === 'cilium')
    return new UnsupportedCommandError("a Cilium agent's listings run only in the agent's Pod");
  return new UnsupportedCommandError(
    `${c.kind} cannot run in the ${place.kind}: its image has no tools for it`,
  );
}

// Left bare only when no shell (sh, bash, zsh, fish, csh) gives any of these characters a meaning.
const SAFE_WORD = /^[A-Za-z0-9_.,:/-]+$/;

/**
 * One shell word for `arg`: POSIX single quotes, a quote inside written as '\''. SSH sends one
 * command string that the login shell splits again; this is the only way argv becomes a string.
 */
export function shellQuote(arg: string): string {
  if (arg.includes('\0')) throw new InvalidNodeCommandError('an argument contains a NUL byte');
  if (SAFE_WORD.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** The command line a shell splits back into exactly `argv`. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}
