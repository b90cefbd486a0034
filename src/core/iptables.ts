// Parses iptables-save and `iptables [-t table] -S` output (also after `| grep KUBE`) into
// tables, chains and rules. One pass over the bytes records each rule's hot fields as offsets
// in a flat Int32Array; typed rules are built on demand (chain.rules), so a 50 MB dump costs
// little more than reading it.
import { Flag, LineSyntaxError, Role, RuleLexer, SLOT, text, unescaped } from './iptables-lexer.js';
import { buildRule, type Rule } from './iptables-rule.js';

export type { Rule } from './iptables-rule.js';
export { printRule } from './iptables-rule.js';

export type DumpFormat = 'iptables-save' | 'iptables -S';
export const TABLES = ['raw', 'mangle', 'nat', 'filter', 'security'] as const;
const BUILTINS: Record<string, readonly string[]> = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/** Bad input: where it is and what is wrong. The CLI prints `FILE:LINE: message`. */
export class IptablesParseError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly lineText: string,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}\n  ${lineText.length > 200 ? lineText.slice(0, 200) + '...' : lineText}`);
    this.name = 'IptablesParseError';
  }
}

export interface ParseWarning {
  line?: number;
  message: string;
}

export interface ParseOptions {
  /** Name used in error messages. */
  file?: string;
  /** The table of `iptables -S` output that has no `*table` lines (`iptables -t nat -S`). */
  table?: string;
}

export class Chain {
  policy: string | undefined;
  /** Declared by `:CHAIN`, `-N` or `-P`; false when only seen in rules (e.g. grep removed it). */
  declared = false;
  line: number | undefined;
  // Rules of a chain are contiguous in a dump: [first, first + count); `scattered` otherwise.
  private first = -1;
  private count = 0;
  private scattered: number[] | undefined;
  private typed: Rule[] | undefined;

  constructor(
    readonly table: Table,
    readonly name: string,
    /** Position in the table, for the rule columns. */
    readonly index: number,
  ) {}

  get builtin(): boolean {
    return (BUILTINS[this.table.name] ?? []).includes(this.name);
  }

  get ruleCount(): number {
    return this.scattered ? this.scattered.length : this.count;
  }

  /** The table-wide id of this chain's k-th rule. */
  ruleId(k: number): number {
    return this.scattered ? this.scattered[k]! : this.first + k;
  }

  get ruleIds(): number[] {
    return this.scattered ? [...this.scattered] : Array.from({ length: this.count }, (_, k) => this.first + k);
  }

  /** Typed rules, parsed on first use. */
  get rules(): Rule[] {
    this.typed ??= this.ruleIds.map((r) => this.table.rule(r));
    return this.typed;
  }

  addRuleId(id: number): void {
    if (this.scattered) this.scattered.push(id);
    else if (this.count === 0) {
      this.first = id;
      this.count = 1;
    } else if (this.first + this.count === id) this.count++;
    else this.scattered = [...this.ruleIds, id];
  }
}

// Hot-field layout of one rule in Table.cols.
const F = {
  lineStart: 0, // start of "-A"
  specStart: 1, // start of the chain name after "-A "
  lineEnd: 2,
  lineNo: 3,
  flags: 4,
  target: 5, // start, end
  comment: 7,
  src: 9,
  dst: 11,
  proto: 13,
  dport: 15,
  probability: 17,
  to: 19, // DNAT/SNAT --to-destination / --to-source
  chain: 21, // chain id
} as const;
const STRIDE = 22;

/** Bits of the flags field. */
export const RuleFlag = {
  goto: 1,
  srcNegated: 2,
  dstNegated: 4,
  protoNegated: 8,
  dportNegated: 16,
  commentQuoted: 32,
  recentRcheck: 64,
  recentSet: 128,
  dnatQuirk: 256,
  hasOtherMatches: 512,
} as const;

/** The fields the Service trees and the search need, read straight from the bytes. */
export interface HotRule {
  id: number;
  line: number;
  chain: string;
  target: string | undefined;
  goto: boolean;
  comment: string | undefined;
  source: string | undefined;
  sourceNegated: boolean;
  destination: string | undefined;
  destinationNegated: boolean;
  protocol: string | undefined;
  dport: string | undefined;
  probability: number | undefined;
  /** DNAT/SNAT target address, as written (`10.244.0.3:80`). */
  to: string | undefined;
  flags: number;
}

export class Table {
  readonly chains = new Map<string, Chain>();
  private cols = new Int32Array(STRIDE * 1024);
  private chainList: Chain[] = [];
  ruleCount = 0;
  committed = false;

  constructor(
    public name: string,
    private readonly buf: Uint8Array,
    /** The line of `*table`, or of the first line of an `iptables -S` listing. */
    readonly startLine: number | undefined,
  ) {}

  chain(name: string): Chain | undefined {
    return this.chains.get(name);
  }

  /** The chain whose name is the bytes [s, e): tries `after` and the chain declared after it
   * first, since iptables-save writes rules in the order it declared the chains. */
  chainAt(s: number, e: number, after: Chain | undefined): Chain {
    const next = after ? this.chainList[after.index + 1] : this.chainList[0];
    if (after && this.named(after, s, e)) return after;
    if (next && this.named(next, s, e)) return next;
    const name = text(this.buf, s, e);
    return this.chains.get(name) ?? this.ensureChain(name);
  }

  private named(c: Chain, s: number, e: number): boolean {
    const name = c.name;
    if (name.length !== e - s) return false;
    for (let k = 0; k < name.length; k++) if (name.charCodeAt(k) !== this.buf[s + k]) return false;
    return true;
  }

  /** The chain, created undeclared when only a rule names it. */
  ensureChain(name: string): Chain {
    let c = this.chains.get(name);
    if (c === undefined) {
      c = new Chain(this, name, this.chainList.length);
      this.chains.set(name, c);
      this.chainList.push(c);
    }
    return c;
  }

  /** The rule line exactly as it appears in the dump (without a `[p:b]` counters prefix). */
  text(id: number): string {
    const at = id * STRIDE;
    return text(this.buf, this.cols[at + F.lineStart]!, this.cols[at + F.lineEnd]!);
  }

  line(id: number): number {
    return this.cols[id * STRIDE + F.lineNo]!;
  }

  /** The full typed rule. */
  rule(id: number): Rule {
    const at = id * STRIDE;
    const chain = this.chainList[this.cols[at + F.chain]!]!;
    return buildRule(this.buf, this.cols[at + F.specStart]!, this.cols[at + F.lineEnd]!, {
      table: this.name,
      chain: chain.name,
      line: this.cols[at + F.lineNo]!,
    });
  }

  hot(id: number): HotRule {
    const flags = this.flags(id);
    return {
      id,
      line: this.line(id),
      chain: this.chainList[this.cols[id * STRIDE + F.chain]!]!.name,
      target: this.target(id),
      goto: (flags & RuleFlag.goto) !== 0,
      comment: this.comment(id),
      source: this.source(id),
      sourceNegated: (flags & RuleFlag.srcNegated) !== 0,
      destination: this.destination(id),
      destinationNegated: (flags & RuleFlag.dstNegated) !== 0,
      protocol: this.protocol(id),
      dport: this.dport(id),
      probability: this.probability(id),
      to: this.to(id),
      flags,
    };
  }

  // Single hot fields, for bulk readers that must not build a HotRule per rule.
  target(id: number): string | undefined {
    return this.field(id * STRIDE + F.target);
  }
  flags(id: number): number {
    return this.cols[id * STRIDE + F.flags]!;
  }
  source(id: number): string | undefined {
    return this.field(id * STRIDE + F.src);
  }
  destination(id: number): string | undefined {
    return this.field(id * STRIDE + F.dst);
  }
  protocol(id: number): string | undefined {
    return this.field(id * STRIDE + F.proto);
  }
  dport(id: number): string | undefined {
    return this.field(id * STRIDE + F.dport);
  }
  comment(id: number): string | undefined {
    const at = id * STRIDE;
    const s = this.cols[at + F.comment]!;
    const e = this.cols[at + F.comment + 1]!;
    if (e === 0) return undefined;
    return (this.cols[at + F.flags]! & RuleFlag.commentQuoted) !== 0 ? unescaped(this.buf, s, e) : text(this.buf, s, e);
  }
  /** DNAT/SNAT address as written, undefined when the old-iptables quirk hides it. */
  to(id: number): string | undefined {
    return (this.flags(id) & RuleFlag.dnatQuirk) !== 0 ? undefined : this.field(id * STRIDE + F.to);
  }
  /** The statistic probability, read from the bytes without building a string. */
  probability(id: number): number | undefined {
    const at = id * STRIDE + F.probability;
    const e = this.cols[at + 1]!;
    if (e === 0) return undefined;
    const b = this.buf;
    let whole = 0;
    let frac = 0;
    let scale = 1;
    let k = this.cols[at]!;
    for (; k < e && b[k] !== 46; k++) whole = whole * 10 + b[k]! - 48;
    if (e - k > 16) return Number(text(b, this.cols[at]!, e));
    for (k++; k < e; k++) {
      frac = frac * 10 + b[k]! - 48;
      scale *= 10;
    }
    return whole + frac / scale;
  }

  private field(at: number): string | undefined {
    const e = this.cols[at + 1]!;
    return e > 0 ? text(this.buf, this.cols[at]!, e) : undefined;
  }

  /** Appends a rule's hot fields from the lexer's tokens; returns its id. */
  addRule(lex: RuleLexer, chain: Chain, lineStart: number, specStart: number, lineEnd: number, lineNo: number): number {
    const id = this.ruleCount++;
    let c = this.cols;
    if ((id + 1) * STRIDE > c.length) {
      const grown = new Int32Array(c.length * 2);
      grown.set(c);
      this.cols = c = grown;
    }
    const at = id * STRIDE; // fresh zeros: every slot is written once
    c[at + F.lineStart] = lineStart;
    c[at + F.specStart] = specStart;
    c[at + F.lineEnd] = lineEnd;
    c[at + F.lineNo] = lineNo;
    c[at + F.chain] = chain.index;
    readHotFields(this.buf, lex, c, at);
    chain.addRuleId(id);
    return id;
  }
}

export class Ruleset {
  readonly tables: Table[] = [];
  readonly warnings: ParseWarning[] = [];
  /** The `# Generated by iptables-save v1.8.9 (nf_tables)` line, when present. */
  generator: string | undefined;

  constructor(
    readonly format: DumpFormat,
    readonly lineCount: number,
  ) {}

  table(name: string): Table | undefined {
    return this.tables.find((t) => t.name === name);
  }

  get chainCount(): number {
    return this.tables.reduce((n, t) => n + t.chains.size, 0);
  }

  get ruleCount(): number {
    return this.tables.reduce((n, t) => n + t.ruleCount, 0);
  }
}

/** Parses a dump. Throws IptablesParseError with the line for anything it cannot read. */
export function parseIptables(input: Uint8Array | string, options: ParseOptions = {}): Ruleset {
  return new DumpParser(toBytes(input), options).run();
}

function toBytes(input: Uint8Array | string): Uint8Array {
  if (typeof input !== 'string') return input;
  const B = (globalThis as { Buffer?: { from(s: string, enc: string): Uint8Array } }).Buffer;
  return B ? B.from(input, 'utf8') : new TextEncoder().encode(input);
}

const NL = 10;
const CR = 13;
const SP = 32;
const TAB = 9;

class DumpParser {
  private lex: RuleLexer;
  private tables: Table[] = [];
  private current: Table | undefined; // inside *table ... COMMIT
  private section: Table | undefined; // -S output (or grep'ed save output) outside *table
  private sectionHasRules = false;
  private sawSave = false;
  private sawS = false;
  private warnings: ParseWarning[] = [];
  private generator: string | undefined;
  private lineNo = 0;
  private lastChain: Chain | undefined;
  private lineStart = 0;
  private lineEnd = 0;

  constructor(
    private readonly buf: Uint8Array,
    private readonly options: ParseOptions,
  ) {
    this.lex = new RuleLexer(buf);
  }

  run(): Ruleset {
    const b = this.buf;
    const n = b.length;
    let pos = 0;
    while (pos < n) {
      let end = b.indexOf(NL, pos);
      if (end < 0) end = n;
      let e = end;
      if (e > pos && b[e - 1] === CR) e--;
      this.lineNo++;
      let s = pos;
      while (s < e && (b[s] === SP || b[s] === TAB)) s++;
      while (e > s && (b[e - 1] === SP || b[e - 1] === TAB)) e--;
      this.lineStart = s;
      this.lineEnd = e;
      if (s < e) this.line(s, e);
      pos = end + 1;
    }
    if (this.current) this.fail(`table ${this.current.name} has no COMMIT: the dump looks cut short`, true);
    this.closeSection();
    const format: DumpFormat = this.sawSave ? 'iptables-save' : 'iptables -S';
    const rs = new Ruleset(format, this.lineNo);
    rs.tables.push(...this.tables);
    rs.warnings.push(...this.warnings);
    rs.generator = this.generator;
    return rs;
  }

  private line(s: number, e: number): void {
    const b = this.buf;
    const c = b[s];
    if (c === 45 /* - */ && e - s >= 2) {
      const k = b[s + 1];
      if (k === 65 /* A */) return this.rule(s, s, e);
      if (k === 78 /* N */) return this.declare(s, e, false);
      if (k === 80 /* P */) return this.declare(s, e, true);
      if (k === 73 || k === 68 || k === 88 || k === 70 || k === 82 || k === 90)
        this.fail(`"-${String.fromCharCode(k)}" is an iptables command, not part of a dump: give the output of iptables-save or iptables -S`);
    } else if (c === 35 /* # */) {
      return this.comment(s, e);
    } else if (c === 42 /* * */) {
      return this.startTable(s, e);
    } else if (c === 58 /* : */) {
      return this.chainLine(s, e);
    } else if (c === 91 /* [ */) {
      // iptables-save -c: "[packets:bytes] -A ..."
      const close = b.indexOf(93, s);
      if (close > 0 && close < e && b[close + 1] === SP && b[close + 2] === 45 && b[close + 3] === 65) {
        return this.rule(s, close + 2, e);
      }
    } else if (c === 67 /* C */ && text(b, s, e) === 'COMMIT') {
      if (!this.current) this.fail('COMMIT without a *table line before it');
      this.current!.committed = true;
      this.current = undefined;
      return;
    }
    this.fail('not a line of iptables-save or iptables -S output');
  }

  private comment(s: number, e: number): void {
    const t = text(this.buf, s, e);
    if (t.startsWith('# Generated by')) this.generator ??= t;
    else if (t.startsWith('# Warning:')) this.warnings.push({ line: this.lineNo, message: t.slice(2) });
  }

  private startTable(s: number, e: number): void {
    const name = text(this.buf, s + 1, e);
    if (this.current) this.fail(`*${name} starts before table ${this.current.name} has its COMMIT`);
    if (!(TABLES as readonly string[]).includes(name)) this.fail(`unknown table "${name}" (raw, mangle, nat, filter or security)`);
    if (this.sawS && !this.sawSave) this.fail('*table line after iptables -S lines: give one dump at a time');
    this.closeSection();
    this.sawSave = true;
    const existing = this.tables.find((t) => t.name === name);
    if (existing) this.fail(`table ${name} appears twice`);
    this.current = new Table(name, this.buf, this.lineNo);
    this.tables.push(this.current);
  }

  /** ":CHAIN POLICY [packets:bytes]" */
  private chainLine(s: number, e: number): void {
    const b = this.buf;
    let k = s + 1;
    while (k < e && b[k] !== SP) k++;
    if (k === s + 1) this.fail('chain line without a chain name');
    let p = k + 1;
    while (p < e && b[p] !== SP) p++;
    if (k >= e || p === k + 1) this.fail('expected ":CHAIN POLICY [packets:bytes]"');
    if (p < e && !(b[p + 1] === 91 && b[e - 1] === 93)) this.fail('expected ":CHAIN POLICY [packets:bytes]"');
    const table = this.target();
    const name = text(b, s + 1, k);
    const chain = table.ensureChain(name);
    if (chain.declared) this.fail(`chain ${name} is declared twice`);
    chain.declared = true;
    chain.line = this.lineNo;
    chain.policy = p === k + 2 && b[k + 1] === 45 ? undefined : text(b, k + 1, p);
  }

  /** "-N CHAIN" or "-P CHAIN POLICY" (iptables -S). */
  private declare(s: number, e: number, policy: boolean): void {
    const parts = text(this.buf, s, e).split(/\s+/);
    if (parts.length !== (policy ? 3 : 2)) this.fail(policy ? 'expected "-P CHAIN POLICY"' : 'expected "-N CHAIN"');
    if (this.current) this.fail(`${parts[0]} line inside *${this.current.name}: iptables-save does not write these`);
    if (this.sectionHasRules) this.closeSection(); // a second `iptables -S` listing starts here
    const chain = this.target().ensureChain(parts[1]!);
    chain.declared = true;
    chain.line = this.lineNo;
    if (policy) chain.policy = parts[2];
  }

  private rule(lineStart: number, a: number, e: number): void {
    const specStart = a + 3;
    if (e - a < 4 || this.buf[a + 2] !== SP) this.fail('expected "-A CHAIN ..."');
    try {
      this.lex.lex(specStart, e);
    } catch (err) {
      if (err instanceof LineSyntaxError) this.fail(err.message);
      throw err;
    }
    const t = this.lex.tokens;
    const table = this.target();
    const chain = table.chainAt(t[0]!, t[1]!, this.lastChain?.table === table ? this.lastChain : undefined);
    this.lastChain = chain;
    try {
      table.addRule(this.lex, chain, lineStart, specStart, e, this.lineNo);
    } catch (err) {
      if (err instanceof LineSyntaxError) this.fail(err.message);
      throw err;
    }
    if (!this.current) this.sectionHasRules = true;
  }

  /** The table a line belongs to: the open *table, else the current -S section. */
  private target(): Table {
    if (this.current) return this.current;
    if (this.sawSave && this.tables.every((t) => t.committed) && !this.section) {
      // lines after COMMIT outside any table: grep'ed save output keeps no *table lines,
      // but a whole dump must not have stray lines
      this.fail('line outside a *table ... COMMIT block');
    }
    this.sawS = true;
    if (!this.section) {
      this.section = new Table('', this.buf, this.lineNo);
      this.sectionHasRules = false;
    }
    return this.section;
  }

  private closeSection(): void {
    const t = this.section;
    if (!t) return;
    this.section = undefined;
    this.sectionHasRules = false;
    const guess = this.options.table ?? guessTable(t);
    if (!guess) {
      this.warnings.push({
        line: t.startLine,
        message: `cannot tell which table the rules from line ${t.startLine} belong to; read as filter (pass the table to be sure)`,
      });
    } else if (!this.options.table) {
      this.warnings.push({ line: t.startLine, message: `rules from line ${t.startLine} read as the ${guess} table (no *table line)` });
    }
    t.name = guess ?? 'filter';
    const same = this.tables.find((x) => x.name === t.name);
    if (same) {
      this.fail(`two listings of the ${t.name} table (lines ${same.startLine} and ${t.startLine}): give one dump per table`, true);
    }
    this.tables.push(t);
  }

  private fail(reason: string, atEnd = false): never {
    const file = this.options.file ?? '<input>';
    if (atEnd) throw new IptablesParseError(file, this.lineNo, '', reason);
    throw new IptablesParseError(file, this.lineNo, text(this.buf, this.lineStart, this.lineEnd), reason);
  }
}

const NAT_TARGETS = new Set(['DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'NETMAP', 'KUBE-MARK-MASQ']);
const FILTER_TARGETS = new Set(['REJECT', 'ACCEPT', 'DROP', 'KUBE-FIREWALL', 'KUBE-FORWARD', 'KUBE-EXTERNAL-SERVICES']);
const NAT_CHAINS = /^KUBE-(SVC|SEP|SVL|EXT|FW|XLB|MARK-MASQ|MARK-DROP|POSTROUTING|NODEPORTS|SERVICES)/;

/** Which table an `iptables -S` listing came from, from its builtin chains and targets. */
function guessTable(t: Table): string | undefined {
  let nat = 0;
  let filter = 0;
  for (const c of t.chains.values()) {
    if (c.name === 'PREROUTING' || c.name === 'POSTROUTING') nat += 2;
    if (c.name === 'FORWARD' || c.name === 'INPUT') filter += 2;
    if (/^KUBE-(SVC|SEP|SVL|EXT|XLB|MARK-MASQ|POSTROUTING)/.test(c.name)) nat += 3;
    if (/^KUBE-(FORWARD|FIREWALL|EXTERNAL-SERVICES|PROXY-FIREWALL)$/.test(c.name)) filter += 3;
    for (let k = 0; k < c.ruleCount; k++) {
      const id = c.ruleId(k);
      const target = t.target(id);
      if (target === undefined) continue;
      if (NAT_TARGETS.has(target) || (NAT_CHAINS.test(target) && target !== 'KUBE-SERVICES' && target !== 'KUBE-NODEPORTS'))
        nat++;
      else if (FILTER_TARGETS.has(target)) filter++;
    }
  }
  if (nat === filter) return undefined;
  return nat > filter ? 'nat' : 'filter';
}

// Module and option names compared as bytes.
const enc = (s: string) => Array.from(s, (ch) => ch.charCodeAt(0));
const M_COMMENT = enc('comment');
const M_TCP = enc('tcp');
const M_UDP = enc('udp');
const M_SCTP = enc('sctp');
const M_STATISTIC = enc('statistic');
const M_RECENT = enc('recent');
const O_COMMENT = enc('--comment');
const O_DPORT = enc('--dport');
const O_DPORT_LONG = enc('--destination-port');
const O_PROBABILITY = enc('--probability');
const O_RCHECK = enc('--rcheck');
const O_SET = enc('--set');
const O_TO_DEST = enc('--to-destination');
const O_TO_SRC = enc('--to-source');
const O_PERSISTENT = enc('--persistent');

function is(b: Uint8Array, s: number, e: number, word: number[]): boolean {
  if (e - s !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (b[s + k] !== word[k]) return false;
  return true;
}

/** Copies the offsets of the hot fields from the lexer's tokens into the rule's columns. */
function readHotFields(b: Uint8Array, lex: RuleLexer, c: Int32Array, at: number): void {
  const t = lex.tokens;
  const n = lex.count * SLOT;
  let flags = 0;
  let toCount = 0;
  for (let k = SLOT; k < n; k += SLOT) {
    const role = t[k + 2]!;
    const f = t[k + 3]!;
    if (role === Role.Top) {
      const letter = t[k + 4]!;
      const vs = t[k + SLOT]!;
      const ve = t[k + SLOT + 1]!;
      const neg = (f & Flag.Negated) !== 0;
      if (letter === 115 || letter === 100) {
        checkAddress(b, vs, ve);
        const slot = letter === 115 ? F.src : F.dst;
        if (c[at + slot + 1]! === 0) {
          c[at + slot] = vs;
          c[at + slot + 1] = ve;
          if (neg) flags |= letter === 115 ? RuleFlag.srcNegated : RuleFlag.dstNegated;
        }
      } else if (letter === 112) {
        c[at + F.proto] = vs;
        c[at + F.proto + 1] = ve;
        if (neg) flags |= RuleFlag.protoNegated;
      }
    } else if (role === Role.Module) {
      const s = t[k]!;
      const e = t[k + 1]!;
      if (!is(b, s, e, M_COMMENT) && !is(b, s, e, M_TCP) && !is(b, s, e, M_UDP) && !is(b, s, e, M_SCTP) && !is(b, s, e, M_STATISTIC)) {
        flags |= RuleFlag.hasOtherMatches;
      }
    } else if (role === Role.ModuleOption) {
      const s = t[k]!;
      const e = t[k + 1]!;
      const m = t[k + 4]! * SLOT;
      const ms = t[m]!;
      const me = t[m + 1]!;
      const hasValue = k + SLOT < n && t[k + SLOT + 2] === Role.Value;
      const vs = hasValue ? t[k + SLOT]! : 0;
      const ve = hasValue ? t[k + SLOT + 1]! : 0;
      if (is(b, s, e, O_COMMENT) && is(b, ms, me, M_COMMENT)) {
        if (!hasValue) throw new LineSyntaxError('--comment without text');
        if (c[at + F.comment + 1] === 0) {
          c[at + F.comment] = vs;
          c[at + F.comment + 1] = ve;
          if ((t[k + SLOT + 3]! & Flag.Quoted) !== 0) flags |= RuleFlag.commentQuoted;
        }
      } else if ((is(b, s, e, O_DPORT) || is(b, s, e, O_DPORT_LONG)) && (is(b, ms, me, M_TCP) || is(b, ms, me, M_UDP) || is(b, ms, me, M_SCTP))) {
        if (!hasValue) throw new LineSyntaxError(`${text(b, s, e)} without a port`);
        checkPorts(b, vs, ve);
        c[at + F.dport] = vs;
        c[at + F.dport + 1] = ve;
        if ((f & Flag.Negated) !== 0) flags |= RuleFlag.dportNegated;
      } else if (is(b, s, e, O_PROBABILITY) && is(b, ms, me, M_STATISTIC)) {
        if (!hasValue) throw new LineSyntaxError('--probability without a value');
        checkProbability(b, vs, ve);
        c[at + F.probability] = vs;
        c[at + F.probability + 1] = ve;
      } else if (is(b, ms, me, M_RECENT)) {
        if (is(b, s, e, O_RCHECK)) flags |= RuleFlag.recentRcheck;
        else if (is(b, s, e, O_SET)) flags |= RuleFlag.recentSet;
      }
    } else if (role === Role.Target) {
      c[at + F.target] = t[k]!;
      c[at + F.target + 1] = t[k + 1]!;
      if ((f & Flag.Goto) !== 0) flags |= RuleFlag.goto;
    } else if (role === Role.TargetOption) {
      const s = t[k]!;
      const e = t[k + 1]!;
      if (is(b, s, e, O_TO_DEST) || is(b, s, e, O_TO_SRC)) {
        toCount++;
        const hasValue = k + SLOT < n && t[k + SLOT + 2] === Role.Value;
        if (!hasValue) throw new LineSyntaxError(`${text(b, s, e)} without an address`);
        const vs = t[k + SLOT]!;
        const ve = t[k + SLOT + 1]!;
        if (toCount === 1) {
          c[at + F.to] = vs;
          c[at + F.to + 1] = ve;
        }
        // iptables 1.4.x cannot print a DNAT range it did not write: ":0 --persistent ..."
        if (b[vs] === 58 /* : */ && ve - vs === 2 && b[vs + 1] === 48) flags |= RuleFlag.dnatQuirk;
      } else if (is(b, s, e, O_PERSISTENT) && toCount > 0 && b[c[at + F.to]!] === 58) {
        flags |= RuleFlag.dnatQuirk;
      }
    }
  }
  c[at + F.flags] = flags;
}

function checkAddress(b: Uint8Array, s: number, e: number): void {
  for (let k = s; k < e; k++) {
    const ch = b[k]!;
    const ok = (ch >= 48 && ch <= 58) || ch === 46 || ch === 47 || (ch >= 97 && ch <= 102) || (ch >= 65 && ch <= 70);
    if (!ok) throw new LineSyntaxError(`"${text(b, s, e)}" is not an address`);
  }
}

function checkPorts(b: Uint8Array, s: number, e: number): void {
  for (let k = s; k < e; k++) {
    const ch = b[k]!;
    if (!((ch >= 48 && ch <= 57) || ch === 58)) throw new LineSyntaxError(`"${text(b, s, e)}" is not a port`);
  }
}

function checkProbability(b: Uint8Array, s: number, e: number): void {
  // "0.33333333349" or "1": digits with at most one dot, no more than 1
  let dots = 0;
  for (let k = s; k < e; k++) {
    const ch = b[k]!;
    if (ch === 46) dots++;
    else if (ch < 48 || ch > 57) dots = 2;
  }
  if (dots > 1 || e === s || (b[s] !== 48 && !(b[s] === 49 && (e - s === 1 || b[s + 1] === 46)) && b[s] !== 46)) {
    throw new LineSyntaxError(`"${text(b, s, e)}" is not a probability`);
  }
}
