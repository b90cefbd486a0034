// A "next" command is words, never a string: every value from a cluster, a snapshot or a node is
// validated for its kind before it becomes a word, and the words are shell-quoted only when shown.
// A command resolved for the person's run names kdebug as it was invoked, carries the run's
// snapshot and context, and says how to reach the node it runs on.
import { familyOf } from '../ipv6.js';

/** A command to run next: each word exactly as the program receives it. */
export interface NextCommand {
  /** The program and its arguments; "kdebug" first for kdebug's own (shown as it was invoked). */
  argv: string[];
  /** Commands its output is piped into, in order: fixed words of kdebug's, never values. */
  pipe?: string[][];
  /** A local file its output is saved to; "nodes/..." is inside the run's snapshot directory. */
  saveTo?: string;
  /** The node it runs on, as root (resolved into the way to get there). */
  node?: string;
  /** On the node, it needs the node's own binaries (its iptables, nft, ipvsadm), not an image's. */
  hostBinaries?: boolean;
  /** kdebug's own command against the live cluster (it does not read the run's snapshot). */
  live?: boolean;
}

/** How the person ran kdebug: what the next commands must carry to run as printed. */
export interface Invocation {
  /** The snapshot the report was replayed from. */
  snapshot?: string;
  /** --context, when it was given. */
  context?: string;
  /** The context a snapshot was captured from (its meta.json), for kdebug's own commands against
   * the live cluster when no --context was given: they ask the cluster the snapshot is of. */
  capturedContext?: string;
  /** --kubeconfig, when it was given: kubectl and kdebug must read the same one. */
  kubeconfig?: string;
  /** How kdebug itself was invoked: ["kdebug"], or ["kubectl", "kdebug"] as a kubectl plugin. */
  self?: string[];
  /** The ssh words kdebug reached a node with ("ssh", "-p", "2222", "core@192.0.2.10"). */
  ssh?: Record<string, string[]>;
  /** The way the run was told to reach nodes (--via), not to be suggested again when it failed. */
  via?: string;
  /** --yes was given: without --via a debug Pod was tried too, and is no other way to suggest. */
  yes?: boolean;
  /** The image `kubectl debug node/...` runs for a command on a node. */
  debugImage?: string;
}

/** The image a person's `kubectl debug node/...` runs: the one kdebug's debug Pod uses, by its
 * tag (kdebug's own Pod pins the digest; a 100-column word would not fit a printed line). */
export const NODE_DEBUG_IMAGE = 'nicolaka/netshoot:v0.13';

// Kubernetes' own validation (apimachinery/pkg/util/validation)
const DNS1123_LABEL = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const IANA_SVC_NAME = /^[a-z0-9](?:-?[a-z0-9])*$/;

const subdomain = (s: string) =>
  s.length <= 253 && s.split('.').every((l) => l.length <= 63 && DNS1123_LABEL.test(l));

/** Validators, one per kind of value: the value when valid, else undefined. */
export const valid = {
  /** A DNS-1123 label: a namespace. */
  namespace: (s: string | undefined) =>
    s !== undefined && s.length <= 63 && DNS1123_LABEL.test(s) ? s : undefined,
  /** A DNS-1123 subdomain: a Service, Pod, node, ConfigMap or policy name. */
  name: (s: string | undefined) => (s !== undefined && subdomain(s) ? s : undefined),
  /** A DNS name to look up (a trailing dot allowed). */
  dnsName: (s: string | undefined) =>
    s !== undefined && subdomain(s.replace(/\.$/, '').toLowerCase()) ? s : undefined,
  ip: (s: string | undefined) =>
    s !== undefined && /^[0-9A-Fa-f.:]+$/.test(s) && familyOf(s) !== undefined ? s : undefined,
  port: (n: number | string | undefined) => {
    const p = typeof n === 'string' && /^\d{1,5}$/.test(n) ? Number(n) : n;
    return typeof p === 'number' && Number.isInteger(p) && p >= 1 && p <= 65535
      ? String(p)
      : undefined;
  },
  /** A named container port (IANA_SVC_NAME). */
  portName: (s: string | undefined) =>
    s !== undefined && s.length <= 15 && IANA_SVC_NAME.test(s) && /[a-z]/.test(s) ? s : undefined,
  protocol: (s: string | undefined) => {
    const p = s?.toLowerCase();
    return p === 'tcp' || p === 'udp' || p === 'sctp' ? p : undefined;
  },
  /** A label key: an optional DNS subdomain prefix and a qualified name. */
  labelKey: (s: string | undefined) => {
    if (s === undefined) return undefined;
    const [prefix, name] = s.includes('/') ? s.split(/\/(.*)/s, 2) : [undefined, s];
    return name !== undefined &&
      name.length <= 63 &&
      QUALIFIED_NAME.test(name) &&
      (prefix === undefined || subdomain(prefix))
      ? s
      : undefined;
  },
  labelValue: (s: string | undefined) =>
    s !== undefined && (s === '' || (s.length <= 63 && QUALIFIED_NAME.test(s))) ? s : undefined,
  /** A label selector "k=v,k2=v2" from a map whose every key and value is valid. */
  selector: (labels: Record<string, string> | undefined) => {
    const entries = Object.entries(labels ?? {});
    if (entries.length === 0) return undefined;
    const parts = entries.map(([k, v]) =>
      valid.labelKey(k) !== undefined && valid.labelValue(v) !== undefined
        ? `${k}=${v}`
        : undefined,
    );
    return parts.every((p) => p !== undefined) ? parts.join(',') : undefined;
  },
};

/** One word made of fixed text and validated values; undefined when a value did not validate. */
export function w(strings: TemplateStringsArray, ...values: (string | undefined)[]) {
  if (values.some((v) => v === undefined)) return undefined;
  return strings.reduce((out, s, i) => out + s + (i < values.length ? values[i] : ''), '');
}

// a word must never carry what a terminal obeys or reorders, whatever its quoting
// eslint-disable-next-line no-control-regex
const UNSHOWABLE = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u2028\u2029]/;

/** A command from words that all validated; undefined when any did not (a hostile value). */
export function command(
  argv: (string | undefined)[],
  more: Omit<NextCommand, 'argv'> = {},
  /** Indexes of words that may hold spaces (a rule's comment, validated as one). */
  spaced: ReadonlySet<number> = new Set(),
): NextCommand | undefined {
  if (argv.some((x) => x === undefined)) return undefined;
  const words = argv as string[];
  // one word each: a space in one is a value that was not validated, or words run together
  if (words.some((x, i) => x === '' || (/\s/.test(x) && (!spaced.has(i) || /[^ \S]/.test(x)))))
    return undefined;
  const all = [...words, ...(more.pipe ?? []).flat(), more.saveTo ?? '', more.node ?? ''];
  if (all.some((x) => UNSHOWABLE.test(x))) return undefined;
  return { argv: argv as string[], ...more };
}

/** `kubectl [-n NAMESPACE] ARGS...` */
export const kubectl = (namespace: string | undefined, ...args: (string | undefined)[]) =>
  command([
    'kubectl',
    ...(namespace === undefined ? [] : ['-n', valid.namespace(namespace)]),
    ...args,
  ]);

/** kdebug's own command, shown as the person invoked kdebug. */
export const kdebug = (args: (string | undefined)[], o: { live?: boolean } = {}) =>
  command(['kdebug', ...args], o.live ? { live: true } : {});

/** A command to run as root on a node. */
export const onNode = (
  node: string,
  argv: (string | undefined)[],
  more: Omit<NextCommand, 'argv' | 'node'> = {},
) => (valid.name(node) === undefined ? undefined : command(argv, { ...more, node }));

/** An iptables-save rule's words after its chain ("-A CHAIN -p tcp -m comment --comment "a b""):
 * double quotes taken off as iptables-save writes them (\" and \\ escaped inside), each word as
 * iptables receives it; undefined when the text is not in that form. */
export function iptablesWords(rule: string): string[] | undefined {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\["\\])*)"(?=\s|$)|([^\s"]+)(?=\s|$)|(\s+)/gy;
  let m: RegExpExecArray | null;
  while (re.lastIndex < rule.length && (m = re.exec(rule)) !== null)
    if (m[1] !== undefined) out.push(m[1].replace(/\\(["\\])/g, '$1'));
    else if (m[2] !== undefined) out.push(m[2]);
  return re.lastIndex === rule.length ? out : undefined;
}

const TABLES = new Set(['nat', 'filter', 'mangle', 'raw', 'security']);

/** `iptables -t TABLE -D CHAIN RULE...` on a node, from a rule as iptables-save prints it
 * ("-A CHAIN ..."): each word as iptables reads it, only a comment's may hold spaces; undefined
 * when the rule is not in that form or a word carries what a terminal obeys. */
export function iptablesDelete(
  node: string,
  family: 'IPv4' | 'IPv6',
  table: string,
  rule: string,
): NextCommand | undefined {
  const words = iptablesWords(rule);
  if (!words || words[0] !== '-A' || words.length < 2 || !TABLES.has(table)) return undefined;
  const head = [family === 'IPv6' ? 'ip6tables' : 'iptables', '-t', table, '-D'];
  const argv = [...head, ...words.slice(1)];
  const spaced = new Set(argv.flatMap((x, i) => (i > 0 && argv[i - 1] === '--comment' ? [i] : [])));
  if (valid.name(node) === undefined) return undefined;
  return command(argv, { node, hostBinaries: true }, spaced);
}

const SAFE = /^[A-Za-z0-9_./:@%+=,^-]+$/;

/** A word as a POSIX shell reads it back: bare when it has nothing the shell interprets. */
export const quote = (word: string) =>
  SAFE.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;

/** The command as a shell line's words: quoted words, "|" between piped commands, "> FILE". */
export function shellWords(c: NextCommand): string[] {
  const out = c.argv.map(quote);
  for (const p of c.pipe ?? []) out.push('|', ...p.map(quote));
  if (c.saveTo !== undefined) out.push('>', quote(c.saveTo));
  return out;
}

export const shellLine = (c: NextCommand) => shellWords(c).join(' ');

/** Where the command runs from the person's terminal: a node's command wrapped in the way to get
 * there (the ssh kdebug used, else `kubectl debug node/...`), kdebug's and kubectl's own with the
 * run's snapshot and context. */
export function resolveNext(c: NextCommand, how: Invocation = {}): NextCommand {
  if (c.node !== undefined) return resolveNext(reachNode(c, c.node, how), how);
  // a directory snapshot takes the file where it reads node outputs; an archive cannot
  if (
    c.saveTo?.startsWith('nodes/') &&
    how.snapshot !== undefined &&
    !/\.(tar\.gz|tgz)$/.test(how.snapshot)
  )
    return resolveNext({ ...c, saveTo: `${how.snapshot.replace(/\/+$/, '')}/${c.saveTo}` }, how);
  const [program, ...args] = c.argv;
  if (program === 'kubectl') {
    const context = how.context !== undefined && !args.includes('--context');
    const kubeconfig = how.kubeconfig !== undefined && !args.includes('--kubeconfig');
    return {
      ...c,
      argv: [
        'kubectl',
        ...(kubeconfig ? ['--kubeconfig', how.kubeconfig!] : []),
        ...(context ? ['--context', how.context!] : []),
        ...args,
      ],
    };
  }
  if (program !== 'kdebug') return c;
  const more: string[] = [];
  if (how.snapshot !== undefined && !c.live && !args.includes('--snapshot'))
    more.push('--snapshot', how.snapshot);
  // a live command from a snapshot's report asks the cluster it was captured from
  const context = how.context ?? (c.live ? how.capturedContext : undefined);
  if (
    context !== undefined &&
    (c.live || how.snapshot === undefined) &&
    !args.includes('--context')
  )
    more.push('--context', context);
  if (how.kubeconfig !== undefined && (c.live || how.snapshot === undefined))
    more.push('--kubeconfig', how.kubeconfig);
  const { live: _live, ...rest } = c;
  return { ...rest, argv: [...(how.self ?? ['kdebug']), ...args, ...more] };
}

/** The node's command inside the ssh line kdebug used, or inside `kubectl debug node/NODE`. */
function reachNode(c: NextCommand, node: string, how: Invocation): NextCommand {
  const inner: NextCommand = { argv: c.argv, ...(c.pipe ? { pipe: c.pipe } : {}) };
  const ssh = how.ssh?.[node];
  const { node: _node, hostBinaries: _host, pipe: _pipe, ...rest } = c;
  if (ssh)
    // ssh joins its words into one line the remote shell reads: the command goes as one word
    return { ...rest, argv: [...ssh, shellLine({ ...inner, argv: ['sudo', ...inner.argv] })] };
  const run = c.pipe ? ['sh', '-c', shellLine(inner)] : c.argv;
  return {
    ...rest,
    argv: [
      'kubectl',
      'debug',
      `node/${node}`,
      // a saved output must not pass through a terminal (CRLF, no colours)
      c.saveTo !== undefined ? '-i' : '-it',
      `--image=${how.debugImage ?? NODE_DEBUG_IMAGE}`,
      '--profile=sysadmin',
      '--',
      ...(c.hostBinaries ? ['chroot', '/host'] : []),
      ...run,
    ],
  };
}
