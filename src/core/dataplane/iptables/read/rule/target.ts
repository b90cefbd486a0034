// A rule's target (-j / -g) typed from its options: DNAT, SNAT, MASQUERADE, MARK, REJECT, LOG, a
// verdict, an extension, else a jump to a user chain.
import type { NatTo, Option, Target } from './rule.js';
import { opt, parseMark } from './matches.js';

export const DNAT_QUIRK =
  'this iptables binary (1.4.x) cannot print the DNAT target it reads back (":0 --persistent ...", "--to-destination  --random ...", port 0): the endpoint address is not in the dump; read the rules with iptables 1.6 or newer';

const VERDICTS = new Set(['ACCEPT', 'DROP', 'RETURN', 'QUEUE']);
const EXTENSIONS = new Set([
  'CHECKSUM',
  'CLASSIFY',
  'CLUSTERIP',
  'CONNMARK',
  'CONNSECMARK',
  'CT',
  'DSCP',
  'HL',
  'HMARK',
  'IDLETIMER',
  'LED',
  'NETMAP',
  'NFLOG',
  'NFQUEUE',
  'NOTRACK',
  'REDIRECT',
  'SECMARK',
  'SET',
  'SYNPROXY',
  'TCPMSS',
  'TCPOPTSTRIP',
  'TEE',
  'TOS',
  'TPROXY',
  'TRACE',
  'TTL',
  'ULOG',
  'AUDIT',
]);

function natTo(o: Option | undefined): NatTo | undefined {
  const v = o?.values[0];
  if (v === undefined) return undefined;
  // "10.0.0.1:80", "[fd00::1]:80", "10.0.0.1", ":80"
  const m = /^(?:\[([^\]]+)\]|([^:]*|[0-9a-fA-F:]*::?[0-9a-fA-F:]*))(?::(\d+)(?:-(\d+))?)?$/.exec(
    v,
  );
  const bracketed = v.startsWith('[');
  if (!bracketed && (v.match(/:/g) ?? []).length > 1) return { text: v, address: v }; // bare IPv6
  if (!m) return { text: v };
  const address = (m[1] ?? m[2]) || undefined;
  const from = m[3] === undefined ? undefined : Number(m[3]);
  return {
    text: v,
    address,
    ports: from === undefined ? undefined : { from, to: m[4] === undefined ? from : Number(m[4]) },
  };
}

/** Port 0 after an address ("10.0.0.1:0", ":0", "[fd00::1]:0"); a bare IPv6 address's ":0" is
 * its last group. */
const portZero = (v: string) => v.endsWith(']:0') || /^[^:]*:0$/.test(v);

/** The target typed by its name, its options kept as written. */
export function typeTarget(name: string, goto: boolean, options: Option[]): Target {
  const base = { name, goto, options };
  const o = (n: string) => opt(options, n);
  switch (name) {
    case 'DNAT': {
      const tos = options.filter((x) => x.name === 'to-destination');
      // iptables 1.4.x's print of a range it did not write (token-walk.ts): more than one
      // range, an empty one, or port 0, which iptables refuses to write
      const quirk =
        tos.length > 1 || tos.some((x) => x.values[0] === undefined || portZero(x.values[0]));
      return quirk
        ? { ...base, kind: 'dnat', quirk: DNAT_QUIRK }
        : { ...base, kind: 'dnat', to: natTo(tos[0]) };
    }
    case 'SNAT':
      return { ...base, kind: 'snat', to: natTo(o('to-source')) };
    case 'MASQUERADE':
      return {
        ...base,
        kind: 'masquerade',
        random: o('random') !== undefined,
        randomFully: o('random-fully') !== undefined,
        toPorts: o('to-ports')?.values[0],
      };
    case 'MARK':
      return { ...base, kind: 'mark', ...markTarget(options) };
    case 'REJECT':
      return {
        ...base,
        kind: 'reject',
        rejectWith: o('reject-with')?.values[0] ?? 'icmp-port-unreachable',
      };
    case 'LOG':
      return {
        ...base,
        kind: 'log',
        prefix: o('log-prefix')?.values[0],
        level: o('log-level')?.values[0],
      };
    default:
      if (VERDICTS.has(name)) return { ...base, kind: 'verdict' };
      if (EXTENSIONS.has(name)) return { ...base, kind: 'other' };
      return { ...base, kind: 'chain' };
  }
}

function markTarget(options: Option[]): { value: number; mask: number } {
  const [first] = options;
  const v = first?.values[0] ?? '0';
  const { value, mask } = parseMark(v);
  switch (first?.name) {
    case 'set-xmark':
      return { value, mask };
    case 'set-mark':
      return { value, mask: (mask | value) >>> 0 };
    case 'or-mark':
      return { value, mask: value };
    case 'and-mark':
      return { value: 0, mask: ~value >>> 0 };
    case 'xor-mark':
      return { value, mask: 0 };
    default:
      return { value: 0, mask: 0 };
  }
}
