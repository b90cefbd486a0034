// One grammar for a rule line, shared by the fast line pass and the typed rule parser: it walks
// the bytes once and writes token offsets and roles into a reusable scratch array, so the hot
// path allocates nothing per rule.

export const enum Role {
  Chain = 1,
  Top = 2, // -s -d -i -o -p -f -c; aux = the option letter
  Module = 3,
  ModuleOption = 4, // aux = index of the module token it belongs to
  Target = 5,
  TargetOption = 6,
  Value = 7,
}

export const enum Flag {
  Negated = 1,
  Quoted = 2,
  Goto = 4,
}

/** Token slots: start, end, role, flags, aux. */
export const SLOT = 5;

const SP = 32;
const TAB = 9;
const QUOTE = 34;
const BACKSLASH = 92;
const BANG = 33;
const DASH = 45;

/** A syntax error inside one line: the caller adds the line number and the line. */
export class LineSyntaxError extends Error {
  /** @param address the text that stood where an address must (a reader tells one hidden by hand) */
  constructor(
    message: string,
    readonly address?: string,
  ) {
    super(message);
  }
}

const TOP_LONG: Record<string, number> = {
  '--source': 115, // s
  '--src': 115,
  '--destination': 100, // d
  '--dst': 100,
  '--in-interface': 105, // i
  '--out-interface': 111, // o
  '--protocol': 112, // p
  '--fragment': 102, // f
  '--match': 109, // m
  '--jump': 106, // j
  '--goto': 103, // g
};

/** The letter of a long top-level option ("--source" is -s), or 0; compares bytes, no string. */
function topLong(b: Uint8Array, s: number, e: number): number {
  const len = e - s;
  // the lengths of the names below: most module options are none of them
  if (
    len !== 5 &&
    len !== 6 &&
    len !== 7 &&
    len !== 8 &&
    len !== 10 &&
    len !== 13 &&
    len !== 14 &&
    len !== 15
  )
    return 0;
  for (const name in TOP_LONG) {
    if (name.length !== len || name.charCodeAt(2) !== b[s + 2]) continue;
    let k = 3;
    while (k < len && name.charCodeAt(k) === b[s + k]) k++;
    if (k === len) return TOP_LONG[name]!;
  }
  return 0;
}

/** What word() was asked for, in an error message. */
function expected(what: number): string {
  if (what === 1) return 'packets after -c';
  if (what === 2) return 'bytes after -c';
  if (what === 109) return 'a module name after -m';
  if (what === 106 || what === 103) return `a target after -${String.fromCharCode(what)}`;
  return `a value after -${String.fromCharCode(what)}`;
}

export class RuleLexer {
  tokens = new Int32Array(64 * SLOT);
  count = 0;
  constructor(public buf: Uint8Array) {}

  /**
   * Tokenises the rule specification in [start, end): everything after "-A" (the chain name
   * first). Throws LineSyntaxError on malformed input.
   */
  lex(start: number, end: number): void {
    const b = this.buf;
    this.count = 0;
    let i = start;
    let negate = false;
    let state = 0; // 0 top level, 1 inside a module, 2 inside the target
    let module = -1;
    let lastOption = -1; // token index of the last option, for old-style "--opt ! value"
    let expectChain = true;
    while (i < end) {
      let c = b[i]!;
      if (c === SP || c === TAB) {
        i++;
        continue;
      }
      let s = i;
      let e: number;
      let quoted = false;
      if (c === QUOTE) {
        quoted = true;
        e = i + 1;
        while (e < end && b[e] !== QUOTE) e += b[e] === BACKSLASH ? 2 : 1;
        if (e >= end) throw new LineSyntaxError('unterminated quoted string');
        s = i + 1;
        i = e + 1;
        if (i < end && b[i] !== SP && b[i] !== TAB)
          throw new LineSyntaxError('text right after a closing quote');
      } else {
        e = i;
        while (e < end && (c = b[e]!) !== SP && c !== TAB) e++;
        i = e;
      }
      if (expectChain) {
        if (quoted) throw new LineSyntaxError('chain name is quoted');
        this.push(s, e, Role.Chain, 0, 0);
        expectChain = false;
        continue;
      }
      const len = e - s;
      if (!quoted && len === 1 && b[s] === BANG) {
        // "--opt ! value" (iptables < 1.4.3) negates the option before it
        if (lastOption >= 0 && this.lastIsOption(lastOption) && this.nextIsValue(i, end)) {
          this.tokens[lastOption * SLOT + 3]! |= Flag.Negated;
          continue;
        }
        if (negate) throw new LineSyntaxError('"!" twice');
        negate = true;
        continue;
      }
      const isOption = !quoted && len >= 2 && b[s] === DASH && !isNumberStart(b, s, e);
      if (!isOption) {
        if (this.count === 0 || lastOption < 0)
          throw new LineSyntaxError(`unexpected "${text(b, s, e)}"`);
        if (negate) throw new LineSyntaxError(`"!" before a value "${text(b, s, e)}"`);
        this.push(s, e, Role.Value, quoted ? Flag.Quoted : 0, 0);
        continue;
      }
      let letter = 0;
      if (b[s + 1] !== DASH) {
        if (len !== 2) throw new LineSyntaxError(`unknown option "${text(b, s, e)}"`);
        letter = b[s + 1]!;
      } else if (state !== 2) {
        letter = topLong(b, s, e);
      }
      if (letter === 0 || state === 2) {
        // a module or target option
        if (b[s + 1] !== DASH) throw new LineSyntaxError(`unknown option "${text(b, s, e)}"`);
        if (state === 0 && module < 0)
          throw new LineSyntaxError(`option "${text(b, s, e)}" before any -m or -j`);
        const role = state === 2 ? Role.TargetOption : Role.ModuleOption;
        lastOption = this.count;
        this.push(s, e, role, negate ? Flag.Negated : 0, role === Role.ModuleOption ? module : 0);
        negate = false;
        continue;
      }
      // a top-level option
      const neg = negate ? Flag.Negated : 0;
      negate = false;
      if (letter === 109) {
        // -m MODULE
        if (neg) throw new LineSyntaxError('"!" before -m');
        this.word(i, end, 109);
        module = this.count;
        this.push(this.ws, this.we, Role.Module, 0, 0);
        i = this.wnext;
        state = 1;
        lastOption = -1;
      } else if (letter === 106 || letter === 103) {
        if (neg) throw new LineSyntaxError('"!" before the target');
        this.word(i, end, letter);
        this.push(this.ws, this.we, Role.Target, letter === 103 ? Flag.Goto : 0, 0);
        i = this.wnext;
        state = 2;
        lastOption = -1;
      } else if (
        letter === 115 ||
        letter === 100 ||
        letter === 105 ||
        letter === 111 ||
        letter === 112
      ) {
        this.word(i, end, letter);
        let flags = neg;
        if (!this.wq && this.we - this.ws === 1 && b[this.ws] === BANG) {
          // "-s ! 10.0.0.1" (iptables < 1.4.3)
          flags = Flag.Negated;
          this.word(this.wnext, end, letter);
        }
        this.push(s, e, Role.Top, flags, letter);
        this.push(this.ws, this.we, Role.Value, this.wq ? Flag.Quoted : 0, 0);
        i = this.wnext;
        lastOption = -1;
      } else if (letter === 102) {
        this.push(s, e, Role.Top, neg, letter);
        lastOption = -1;
      } else if (letter === 99) {
        // -c PACKETS BYTES (iptables -S -v)
        this.push(s, e, Role.Top, 0, letter);
        this.word(i, end, 1);
        this.push(this.ws, this.we, Role.Value, 0, 0);
        this.word(this.wnext, end, 2);
        this.push(this.ws, this.we, Role.Value, 0, 0);
        i = this.wnext;
        lastOption = -1;
      } else {
        throw new LineSyntaxError(`unknown option "${text(b, s, e)}"`);
      }
    }
    if (expectChain) throw new LineSyntaxError('no chain name');
    if (negate) throw new LineSyntaxError('"!" at the end of the rule');
  }

  private lastIsOption(index: number): boolean {
    // the option has no value yet: it is the last token written
    return index === this.count - 1;
  }

  private nextIsValue(i: number, end: number): boolean {
    const b = this.buf;
    while (i < end && (b[i] === SP || b[i] === TAB)) i++;
    return i < end && (b[i] !== DASH || isNumberStart(b, i, end));
  }

  // The word read by word(): [ws, we), quoted, and where reading goes on (past a closing quote).
  private ws = 0;
  private we = 0;
  private wq = false;
  private wnext = 0;

  /** Reads the next whitespace-separated (or quoted) word; `what` names it in the error. */
  private word(i: number, end: number, what: number): void {
    const b = this.buf;
    while (i < end && (b[i] === SP || b[i] === TAB)) i++;
    if (i >= end) throw new LineSyntaxError(`expected ${expected(what)}`);
    if (b[i] === QUOTE) {
      let e = i + 1;
      while (e < end && b[e] !== QUOTE) e += b[e] === BACKSLASH ? 2 : 1;
      if (e >= end) throw new LineSyntaxError('unterminated quoted string');
      this.ws = i + 1;
      this.we = e;
      this.wq = true;
      this.wnext = e + 1;
      return;
    }
    let e = i;
    while (e < end && b[e] !== SP && b[e] !== TAB) e++;
    if (b[i] === DASH && e - i > 1 && !isNumberStart(b, i, e))
      throw new LineSyntaxError(`expected ${expected(what)}`);
    this.ws = i;
    this.we = e;
    this.wq = false;
    this.wnext = e;
  }

  /** The rule just lexed names a target (-j or -g). */
  hasTarget(): boolean {
    for (let k = 0; k < this.count; k++) if (this.tokens[k * SLOT + 2] === Role.Target) return true;
    return false;
  }

  private push(s: number, e: number, role: Role, flags: number, aux: number): void {
    let t = this.tokens;
    const at = this.count * SLOT;
    if (at + SLOT > t.length) {
      const grown = new Int32Array(t.length * 2);
      grown.set(t);
      this.tokens = t = grown;
    }
    t[at] = s;
    t[at + 1] = e;
    t[at + 2] = role;
    t[at + 3] = flags;
    t[at + 4] = aux;
    this.count++;
  }
}

function isNumberStart(b: Uint8Array, s: number, e: number): boolean {
  // "-1" is a value, "-s" an option
  return e - s >= 2 && b[s + 1]! >= 48 && b[s + 1]! <= 57;
}

/** Decodes bytes as text: ASCII fast, UTF-8 when needed. */
export function text(b: Uint8Array, s: number, e: number): string {
  for (let k = s; k < e; k++) if (b[k]! >= 0x80) return utf8.decode(b.subarray(s, e));
  if (isBuffer(b)) return b.latin1Slice(s, e);
  return String.fromCharCode.apply(null, b.subarray(s, e) as unknown as number[]);
}

/** Whether the bytes [as, ae) and [s, e) of `b` are the same. */
export function sameBytes(b: Uint8Array, as: number, ae: number, s: number, e: number): boolean {
  if (ae - as !== e - s) return false;
  for (let k = e - s - 1; k >= 0; k--) if (b[as + k] !== b[s + k]) return false;
  return true;
}

/** A quoted value without its escapes (iptables-save escapes \" and \\). */
export function unescaped(b: Uint8Array, s: number, e: number): string {
  const raw = text(b, s, e);
  return raw.includes('\\') ? raw.replace(/\\(["\\])/g, '$1') : raw;
}

const utf8 = new TextDecoder('utf-8');

interface Latin1Sliceable extends Uint8Array {
  latin1Slice(start: number, end: number): string;
}

function isBuffer(b: Uint8Array): b is Latin1Sliceable {
  return typeof (b as Partial<Latin1Sliceable>).latin1Slice === 'function';
}
