// iptables-save / -S lines wrapped by the terminal they were copied from: a rule longer than the
// screen goes on at the start of the next line ("... -j KUBE-NODEPORT-CON" then "TAINER"). The
// rule is read whole again; the line it went on to is left blank, so line numbers stay the
// paste's.
import { RuleLexer } from '../../lexer.js';
import { classifyLine } from '../other-lines/classify.js';

/** Pastes larger than this come from a file, not a terminal's screen: not looked at. */
const MAX_BYTES = 1 << 20;
/** A screen narrower than this wraps far more than one rule in a paste. */
const MIN_WIDTH = 80;
const RULE = /^(?:\[\d+:\d+\] )?-A \S/;
/** What a dump's own lines start with: never the rest of a rule. */
const DUMP_LINE = /^(?:COMMIT\b|[-*:#[])/;

export interface Unwrapped {
  text: string;
  /** The lines a rule went on to, 1-based, each after the line its rule starts on. */
  lines: number[];
}

/** The paste with each wrapped rule joined again, or undefined where none is. */
export function unwrapRules(bytes: Uint8Array): Unwrapped | undefined {
  if (bytes.length > MAX_BYTES) return undefined;
  const lines = new TextDecoder().decode(bytes).split('\n');
  let declared: Set<string> | undefined; // read once a line may be a rule's rest
  const joined: number[] = [];
  let widest = 0; // the longest line above: a wrapped line fills the screen, none is longer
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const prev = i > 0 ? lines[i - 1]!.replace(/\r$/, '') : '';
    // a quote the line leaves open, which the next one closes, is a wrap whatever the width: a
    // page's or a narrow window's (iptables-save quotes a comment on one line, whole)
    const screen =
      (prev.length >= MIN_WIDTH && prev.length >= widest && line.length <= prev.length) ||
      quoteOpen(prev);
    if (
      i > 0 &&
      line.trim() !== '' &&
      !/^\s/.test(line) &&
      !DUMP_LINE.test(line) &&
      RULE.test(prev) &&
      screen &&
      classifyLine(line).kind === 'prose' &&
      cutAlone(prev, line, (declared ??= declaredChains(lines))) &&
      lexes(prev + line)
    ) {
      lines[i - 1] = prev + line;
      lines[i] = '';
      joined.push(i + 1);
      continue;
    }
    widest = Math.max(widest, line.length);
  }
  return joined.length > 0 ? { text: lines.join('\n'), lines: joined } : undefined;
}

/** Whether a rule line leaves a double quote open (iptables-save escapes one inside a comment). */
function quoteOpen(line: string): boolean {
  let open = false;
  for (let k = 0; k < line.length; k++) {
    if (open && line[k] === '\\') k++;
    else if (line[k] === '"') open = !open;
  }
  return open;
}

/** The chains the paste declares (`:NAME POLICY [p:b]`, `-N NAME`). */
function declaredChains(lines: string[]): Set<string> {
  const out = new Set<string>();
  for (const l of lines) {
    const m = /^(?::|-N )(\S+)/.exec(l);
    if (m) out.add(m[1]!);
  }
  return out;
}

/** An address value as iptables prints it whole: "10.0.0.1", "10.0.0.1:80", "[fd00::1]:80". */
const ADDRESS_VALUE = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])(?::\d+(?:-\d+)?)?$/i;

/** Whether the rule alone is one a wrap cut, which the next line completes: it does not read, its
 * jump goes to a chain the paste does not declare and the next line's first word completes its
 * name into one it does, or an address value is cut and completed so. A whole rule followed by a
 * word of its own ("Thanks", a bare prompt) is no wrap. */
function cutAlone(rule: string, next: string, declared: ReadonlySet<string>): boolean {
  if (!lexes(rule)) return true;
  const words = rule.trimEnd().split(/\s+/);
  const [option, last] = [words.at(-2), words.at(-1)!];
  const grown = last + next.trim().split(/\s+/)[0];
  if (option === '-j' || option === '-g') return !declared.has(last) && declared.has(grown);
  if (option === '--to-destination' || option === '--to-source')
    return !ADDRESS_VALUE.test(last) && ADDRESS_VALUE.test(grown);
  return false;
}

/** The rule line reads as one rule: its words after "-A", a target among them. */
function lexes(line: string): boolean {
  const spec = line.replace(/^(?:\[\d+:\d+\] )?-A /, '').trimEnd();
  const lex = new RuleLexer(new TextEncoder().encode(spec));
  try {
    lex.lex(0, lex.buf.length);
  } catch {
    return false;
  }
  return lex.hasTarget();
}

/** What is said of them, at the first rule wrapped: each rule's line and the line it went on to. */
export function wrappedNote(at: number[]): {
  line: number;
  kind: 'view';
  message: string;
  lines: number[];
} {
  const pairs = at.map((n) => `${n - 1}-${n}`).join(', ');
  return {
    line: at[0]! - 1,
    kind: 'view',
    message: `line${at.length === 1 ? 's' : ' pairs'} ${pairs}: a rule longer than the terminal it was copied from, gone on at the start of the next line: read as one rule`,
    lines: at.map((n) => n - 1),
  };
}
