// One rule of kube-proxy's nftables table against one walk's packet, read word by word as nft
// lists it: its matches in order (sets and maps looked up, numgen branches 1/N each), then its
// statements (marks, DNAT, masquerade) and verdict.
import { ipv4 } from '../../ipv4.js';
import { ipv6 } from '../../ipv6.js';
import { addressPort, anyCidr, holds, type Address, type PacketState } from '../trace/packet.js';
import type { Walk } from '../trace/walk.js';
import type { CutMet } from '../trace/trace.js';
import type { NftElement } from './read/listing.js';
import type { NftTracer } from './trace.js';

/** What one rule does to one walk: the shares of the walk it sends each way. */
export interface Result {
  p: number;
  pkt: PacketState;
  /** The rule matched (its statements ran); otherwise the walk goes on to the next rule. */
  matched: boolean;
  effect: string[];
  verdict?: { kind: string; target?: string };
  /** A set or map the listing's cut hid: what the rule does is not known, the walk stops. */
  cut?: CutMet;
}

/** One rule read word by word against one packet. */
export class RuleRun {
  private i = 0;
  private readonly pkt: PacketState;
  private readonly effect: string[] = [];

  constructor(
    private readonly w: string[],
    private readonly walk: Walk,
    private readonly t: NftTracer,
  ) {
    this.pkt = { ...walk.pkt, guessed: { ...walk.pkt.guessed } };
  }

  private peek = (k = 0) => this.w[this.i + k];
  private next = () => this.w[this.i++];
  private nomatch = (): Result[] => [{ p: 1, pkt: this.walk.pkt, matched: false, effect: [] }];
  /** Where a lookup met the cut: the rule's outcome is not known. */
  private met: CutMet | undefined;
  private assume(text: string) {
    this.walk.assumptions.add(text);
  }

  results(): Result[] {
    while (this.i < this.w.length) {
      const word = this.peek()!;
      if (word === 'comment') {
        this.i += 2;
        continue;
      }
      if (word === 'counter') {
        this.i++;
        while (/^(packets|bytes|name|\d+|".*")$/.test(this.peek() ?? '')) this.i++;
        continue;
      }
      // statements
      if (word === 'jump' || word === 'goto') {
        this.i++;
        return this.done({ kind: word, target: this.next()! });
      }
      if (['accept', 'drop', 'return', 'continue'].includes(word))
        return this.done({ kind: this.next()! });
      if (word === 'reject') return this.done({ kind: 'reject' });
      if (word === 'masquerade') {
        this.i++;
        while (/^(fully-random|random|persistent)$/.test(this.peek() ?? '')) this.i++;
        this.pkt.snat = true;
        this.effect.push('masquerade');
        return this.done({ kind: 'accept' });
      }
      if (word === 'dnat') return this.dnat();
      if (word === 'update') {
        this.i += 3; // update @set { ip saddr }
        this.effect.push(`remembered in ${this.w[this.i - 2]}`);
        continue;
      }
      if (this.markSet()) continue;
      // matches: a selector (or a concatenation), then what it is compared with or looked up in
      const key = this.selectors();
      if (!key) {
        this.assume(`"${this.w.slice(this.i).join(' ')}" is not modelled: taken not to match`);
        return this.nomatch();
      }
      const what = this.next();
      if (what === 'vmap') return this.vmap(key, this.next()!);
      if (what === 'map') {
        this.assume('a map outside dnat is not modelled');
        return this.nomatch();
      }
      if (what?.startsWith('@')) {
        if (!this.inSet(key, what.slice(1)))
          return this.met ? [{ ...this.nomatch()[0]!, cut: this.met }] : this.nomatch();
        continue;
      }
      const negated = what === '!=';
      const operand = negated || what === '==' ? this.next()! : what!;
      if (key.length !== 1 || compare(key[0]!, operand) === negated) return this.nomatch();
    }
    return [{ p: 1, pkt: this.pkt, matched: true, effect: this.effect }];
  }

  private done(verdict: Result['verdict']): Result[] {
    return [{ p: 1, pkt: this.pkt, matched: true, effect: this.effect, verdict }];
  }

  /** `meta mark set meta mark | 0x4000` (nft's listing), `mark set mark or 0x4000` (a script). */
  private markSet(): boolean {
    const at = this.peek() === 'meta' ? 1 : 0;
    if (this.peek(at) !== 'mark' || this.peek(at + 1) !== 'set') return false;
    this.i += at + 2;
    if (this.peek() === 'meta') this.i++;
    this.i++; // mark
    const op = this.next();
    const value = Number(this.next());
    this.pkt.mark =
      (op === '|' || op === 'or' ? this.pkt.mark | value : this.pkt.mark ^ value) >>> 0;
    this.effect.push(`mark is now 0x${this.pkt.mark.toString(16)}`);
    return true;
  }

  /** The packet's values a selector or a concatenation names, or undefined: not one kdebug reads. */
  private selectors(): Value[] | undefined {
    const out: Value[] = [];
    for (;;) {
      const v = this.selector();
      if (!v) return undefined;
      out.push(v);
      if (this.peek() !== '.') return out;
      this.i++;
    }
  }

  private selector(): Value | undefined {
    const a = this.next();
    const b = this.peek();
    const pkt = this.pkt;
    if ((a === 'ip' || a === 'ip6') && (b === 'saddr' || b === 'daddr')) {
      this.i++;
      return { address: b === 'saddr' ? pkt.src : pkt.dst };
    }
    if (a === 'meta' && b === 'l4proto') {
      this.i++;
      return { word: pkt.protocol };
    }
    if (
      (a === 'th' || a === 'tcp' || a === 'udp' || a === 'sctp') &&
      (b === 'dport' || b === 'sport')
    ) {
      this.i++;
      if (a !== 'th' && a !== pkt.protocol) return { word: '' };
      return { number: b === 'dport' ? pkt.dport : pkt.sport };
    }
    if ((a === 'meta' && b === 'mark') || a === 'mark') {
      if (a === 'meta') this.i++;
      let mark = pkt.mark;
      if (this.peek() === '&' || this.peek() === 'and') {
        this.i++;
        mark &= Number(this.next());
      }
      return { number: mark };
    }
    if (a === 'ct' && b === 'state') {
      this.i++;
      return { word: 'new' }; // the first packet of a connection
    }
    if (a === 'ct' && b === 'status') {
      this.i++;
      return { word: pkt.dnat ? 'dnat' : '' };
    }
    if (a === 'fib' && (b === 'saddr' || b === 'daddr') && this.peek(1) === 'type') {
      this.i += 2;
      const address = b === 'saddr' ? pkt.src : pkt.dst;
      return { word: this.t.isLocal(address) ? 'local' : 'unicast' };
    }
    if (a === 'iifname' || a === 'oifname') {
      const side = a === 'iifname' ? 'in' : 'out';
      const guess = pkt.guessed?.[side];
      if (guess) this.assume(guess);
      return { word: (side === 'in' ? pkt.inInterface : pkt.outInterface) ?? '', iface: true };
    }
    if (a === 'numgen' && b === 'random' && this.peek(1) === 'mod') {
      this.i += 2;
      return { numgen: Number(this.next()) };
    }
    return undefined;
  }

  /** `KEY @set`: the packet's key in a named set (an affinity set holds the clients it learnt). */
  private inSet(key: Value[], name: string): boolean {
    const set = this.t.set(name);
    const found = set?.elements.some((e) => keyMatches(key, e.key)) ?? false;
    this.met = this.t.cut?.lookup(set?.kind ?? 'set', name, set !== undefined, found);
    if (!set) {
      if (!this.met) this.assume(`set ${name} is not in the table: taken as empty`);
      return false;
    }
    if (name.startsWith('affinity-') && set.elements.length === 0)
      this.assume(`a new client: not yet in ${name}`);
    return found;
  }

  /** `KEY vmap @map` or `numgen random mod N vmap { 0 : goto a, ... }`. */
  private vmap(key: Value[], data: string): Result[] {
    const elements = data.startsWith('@')
      ? (this.t.set(data.slice(1))?.elements ?? [])
      : group(data).map(elementOf);
    const numgen = key[0]?.numgen;
    if (numgen !== undefined) {
      // each element is read once (never 0..N: a huge N is read as the elements it has)
      const byShare = shares(numgen, elements, (e) => e.key[0]);
      const out: Result[] = [];
      const hit = (e: NftElement): Result =>
        e.verdict
          ? {
              p: 1 / numgen,
              pkt: { ...this.pkt },
              matched: true,
              effect: [...this.effect],
              verdict: e.verdict,
            }
          : { p: 1 / numgen, pkt: this.walk.pkt, matched: false, effect: [] };
      if (byShare.dense) {
        for (let k = 0; k < numgen; k++) {
          const e = byShare.at.get(k);
          out.push(e ? hit(e) : { p: 1 / numgen, pkt: this.walk.pkt, matched: false, effect: [] });
        }
        return merge(out);
      }
      for (const e of byShare.at.values()) out.push(hit(e));
      const rest = numgen - byShare.at.size;
      if (rest > 0) {
        this.assume(
          `numgen random mod ${numgen}: ${rest} of its ${numgen} shares have no element in the map: they map to nothing`,
        );
        out.push({ p: rest / numgen, pkt: this.walk.pkt, matched: false, effect: [] });
      }
      return merge(out);
    }
    const hit = elements.find((e) => keyMatches(key, e.key));
    const named = data.startsWith('@') ? this.t.set(data.slice(1)) : undefined;
    const met =
      data.startsWith('@') &&
      this.t.cut?.lookup(named?.kind ?? 'map', data.slice(1), named !== undefined, !!hit);
    if (met) return [{ ...this.nomatch()[0]!, cut: met }];
    if (!hit?.verdict) return this.nomatch();
    this.effect.push(`${data} holds ${hit.key.join(' . ')}`);
    return this.done(hit.verdict);
  }

  /** `dnat to A:P`, `dnat ip to numgen random mod N map { 0 : A . P, ... }` (and a script's
   * `dnat ip addr . port to ...`). */
  private dnat(): Result[] {
    this.i++;
    if (this.peek() === 'ip' || this.peek() === 'ip6') this.i++;
    if (this.peek() === 'addr') this.i += 3; // addr . port
    this.i++; // to
    // "10.244.1.4:80", "[fd00::4]:80", or a map's "10.244.1.4 . 80"
    const at = (pkt: PacketState, target: string): PacketState => {
      const [ip, port] = target.includes(' . ')
        ? target.split(' . ')
        : (/^\[?([^\]]+?)\]?:(\d+)$/.exec(target)?.slice(1) ?? [target]);
      const address = ip ? (ipv4(ip) ?? ipv6(ip)) : undefined;
      const next = { ...pkt, dnat: true };
      if (address !== undefined) next.dst = address;
      if (port) next.dport = Number(port);
      return next;
    };
    if (this.peek() !== 'numgen') {
      this.pkt.dnat = true;
      const next = at(this.pkt, this.next()!);
      this.effect.push(`DNAT to ${addressPort(next.dst, next.dport)}`);
      return [{ p: 1, pkt: next, matched: true, effect: this.effect, verdict: { kind: 'accept' } }];
    }
    this.i += 3; // numgen random mod
    const mod = Number(this.next());
    this.i++; // map
    const targets = group(this.next()!).map((g) => g.split(' : '));
    // each element is read once (never 0..N: a huge N is read as the elements it has)
    const byShare = shares(mod, targets, ([n]) => n);
    const out: Result[] = [];
    const untranslated = (p: number): Result => ({
      p,
      pkt: this.pkt,
      matched: true,
      effect: [...this.effect],
      verdict: { kind: 'accept' },
    });
    const translated = (target: string): Result => {
      const next = at(this.pkt, target);
      return {
        p: 1 / mod,
        pkt: next,
        matched: true,
        effect: [...this.effect, `DNAT to ${addressPort(next.dst, next.dport)}`],
        verdict: { kind: 'accept' },
      };
    };
    if (byShare.dense) {
      for (let k = 0; k < mod; k++) {
        const target = byShare.at.get(k)?.[1];
        if (!target) {
          this.assume(`numgen ${k} of ${mod} has no element: that share is not translated`);
          out.push(untranslated(1 / mod));
          continue;
        }
        out.push(translated(target));
      }
      return out;
    }
    let rest = mod;
    for (const [, target] of byShare.at.values())
      if (target) {
        out.push(translated(target));
        rest--;
      }
    if (rest > 0) {
      this.assume(
        `numgen random mod ${mod}: ${rest} of its ${mod} shares have no element in the map: they are not translated`,
      );
      out.push(untranslated(rest / mod));
    }
    return out;
  }
}

/** What a selector reads of the packet. */
interface Value {
  address?: Address;
  number?: number;
  word?: string;
  /** An interface name: "veth*" in a rule matches by prefix. */
  iface?: boolean;
  numgen?: number;
}

/** Is `value` (the packet's) `operand` (a rule's literal, prefix, `{ set }` or flags list)? */
function compare(value: Value, operand: string): boolean {
  const options = operand.startsWith('{') ? group(operand) : operand.split(',');
  return options.some((o) => one(value, o.replace(/^"|"$/g, '')));
}

function one(value: Value, o: string): boolean {
  if (value.address !== undefined) {
    // a plain IPv4 address (a set's elements, mostly): compared as a number, no CIDR made of it
    const n = o.includes('/') ? undefined : ipv4(o);
    if (n !== undefined) return typeof value.address === 'number' && value.address >>> 0 === n;
    const c = anyCidr(o.includes('/') ? o : `${o}/${o.includes(':') ? 128 : 32}`);
    return c !== undefined && holds(c, value.address);
  }
  if (value.number !== undefined) return Number(o) === value.number;
  if (value.iface && o.endsWith('*')) return (value.word ?? '').startsWith(o.slice(0, -1));
  return (value.word ?? '') === o || PROTOCOLS[o] === value.word;
}

const PROTOCOLS: Record<string, string> = { '6': 'tcp', '17': 'udp', '132': 'sctp', '1': 'icmp' };

/** A packet's concatenated key against an element's (each part a value, a prefix or a range). */
function keyMatches(key: Value[], element: (string | number)[]): boolean {
  return key.length === element.length && key.every((v, k) => one(v, String(element[k])));
}

/** Up to this N, `numgen random mod N` is walked share by share (a share each, as before); above
 * it, only the elements the map holds are read and the rest are one share. */
const DENSE_NUMGEN = 4096;

/** A numgen map's elements by share: the first element whose key is each k in 0..N-1, in key
 * order, read in one pass over the elements (never over 0..N). */
function shares<T>(
  mod: number,
  elements: T[],
  keyOf: (e: T) => string | number | undefined,
): { at: Map<number, T>; dense: boolean } {
  const found: [number, T][] = [];
  const seen = new Set<number>();
  for (const e of elements) {
    const k = Number(keyOf(e));
    if (!Number.isInteger(k) || k < 0 || !(k < mod) || seen.has(k)) continue;
    seen.add(k);
    found.push([k, e]);
  }
  found.sort((a, b) => a[0] - b[0]);
  return { at: new Map(found), dense: !(mod > DENSE_NUMGEN) };
}

/** Merges a numgen vmap's shares that do the same (no element: the walk goes on). */
function merge(results: Result[]): Result[] {
  const miss = results.filter((r) => !r.matched);
  const hits = results.filter((r) => r.matched);
  if (miss.length === 0) return hits;
  return [{ ...miss[0]!, p: miss.reduce((n, r) => n + r.p, 0) }, ...hits];
}

/** The items of `{ a, b . c, 0 : goto x }`. */
function group(text: string): string[] {
  const inner = text.slice(text.startsWith('{') ? 1 : 0, text.endsWith('}') ? -1 : undefined);
  // trim, not a regex's \s* each side: a long run of spaces went quadratic
  return inner
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** "0 : goto x" or "10.96.0.10 . tcp . 80 : goto x" as a map element. */
function elementOf(item: string): NftElement {
  const [key = '', value = ''] = item.split(' : ');
  const [kind, target] = value.trim().split(/\s+/);
  return { key: key.split(' . '), verdict: target ? { kind: kind!, target } : { kind: kind! } };
}

/** A rule's words: `{ ... }` groups and quoted strings kept whole. */
export function tokens(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let depth = 0;
  let quoted = false;
  for (const ch of text) {
    if (ch === '"' && depth === 0) quoted = !quoted;
    if (!quoted && ch === '{') depth++;
    if (!quoted && ch === '}') depth--;
    if (!quoted && depth === 0 && /\s/.test(ch)) {
      if (cur) out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}
