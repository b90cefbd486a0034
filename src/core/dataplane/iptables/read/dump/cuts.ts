// The dump parser's collaborator for a paste cut short: a last line cut mid-rule, at or inside a
// chain's name, after its counters; an `iptables -L` listing cut in its head; and the chains a
// cut, an elision or a paste that starts inside a table leaves not whole.
import { text } from '../lexer.js';
import type { ListViewCut } from '../paste/list-view/to-rules.js';
import type { Ruleset } from '../ruleset.js';
import type { Table } from '../table.js';
import { excerpt } from '../../../../sanitize.js';
import type { ParserState } from './parser-state.js';
import { filteredChains, printedBy, type Filtered } from './grep-windows.js';

export class Cuts {
  /** The chain of the rule a cut ends in, where the paste names it: -1 for none. */
  private cutIn = -1;
  /** Greps typed above rules that are not all their output (a paste put together by hand). */
  private readonly notGrepped = new Set<Filtered>();
  /** The greps whose output is said not whole already: one warning per grep, not per table. */
  private readonly saidFiltered = new Set<Filtered>();

  constructor(private readonly state: ParserState) {}

  /** What the messages of a cut call the text: a node's recorded dump, else the paste. */
  private get noun(): 'dump' | 'paste' {
    return this.state.options.noun ?? 'paste';
  }

  /** iptables-save -c's "[packets:bytes]" on a line of its own: the rule after it is the one
   * they count; on the last line, the paste was cut after them. */
  counters(last: boolean): void {
    const next = !last && this.state.nextStarts(65 /* A */);
    if (!next) this.state.countersLines.push(this.state.lineNo);
    if (last) return this.cutShort('a rule cut after its counters');
    this.state.warn(
      'counters',
      next
        ? 'the counters iptables-save -c prints before a rule, on a line of their own: the rule on the next line is read'
        : 'the counters iptables-save -c prints before a rule, on a line of their own, and the rule they count is not in the paste: not read',
    );
  }

  /** The input's last line, without its newline, ends inside a kube-proxy chain's name: the rule
   * is read up to its jump, and the chain it names (its name cut) is not in the paste. */
  cutInName(table: Table, name: string): void {
    this.state.cutTable = table;
    this.cutIn = this.state.lastChain;
    const prefix = name.slice(0, name.lastIndexOf('-') + 1);
    table.partial.set(
      name,
      `its name is cut at the end of the ${this.noun}: the chain is not in it`,
    );
    this.state.warn(
      'truncated',
      `the ${this.noun} is cut at line ${this.state.lineNo}: it ends mid-word in ${name}, ${name.length - prefix.length} of the 16 characters kube-proxy writes after ${prefix}: the rule is read, the chain it names is not in the ${this.noun}`,
    );
  }

  /**
   * Which chains of a table the paste may not hold in full. iptables-save declares every chain
   * before any rule, so a dump without COMMIT (cut, or grep'd) declares chains whose rules are
   * not in it; and the chain the input ends in may go on past the end when the input was cut
   * (no COMMIT, a last line cut mid-rule) or is a fragment (rules without any declaration).
   */
  markPartial(t: Table): void {
    this.declareListed(t);
    const noCommit = this.state.saveForm.has(t) && !t.committed;
    const elided = this.state.elided.get(t);
    for (const c of elided ?? [])
      if (c >= 0)
        t.partial.set(
          t.nameOf(c),
          'the paste elides lines after it: more of its rules may be there',
        );
    // a chain whose rules go on after an elision: rules before them may be among those left out,
    // taking their shares first
    for (const c of this.state.elidedAbove.get(t) ?? []) {
      const name = t.nameOf(c);
      t.partial.set(
        name,
        t.partial.has(name)
          ? 'the paste elides lines among its rules: more of them may be there'
          : 'the paste elides lines before it: more of its rules may be there',
      );
      t.cutAbove.add(name);
    }
    // a table the paste's last line elides is left open there, not cut
    const cut = (noCommit && this.state.endsElided?.table !== t) || this.state.cutTable === t;
    // a chain listed whole has no rule past a COMMIT its listing never prints; a line cut short
    // still cuts it
    const whole = this.state.cutTable === t ? new Set<number>() : this.wholeListed(t);
    // iptables -L lists each chain's rules under its Chain line: only the one cut may go on
    const listed = this.state.options.listView !== undefined;
    let declared = false;
    for (let c = 0; c < t.chainCount; c++) {
      if (t.chainLine(c) === undefined) continue;
      declared = true;
      // an -L listing's cut spares the chains before it; an elision may hide any chain's rules
      if (((cut && !listed && !whole.has(c)) || elided) && t.ruleCountOf(c) === 0)
        t.partial.set(
          t.nameOf(c),
          cut
            ? `declared, but the ${this.noun} is cut: its rules may lie past the cut`
            : 'declared, but the paste elides lines: its rules may be among them',
        );
    }
    // the chain the paste starts in may have rules above it; in kube-proxy's restore input (its
    // log's, or chains taking turns) any chain may
    const turns = this.state.interleaved.has(t) || this.state.logged.length > 0;
    for (let c = 0; this.state.startsInside.has(t) && c < t.chainCount; c++)
      if ((c === 0 || turns) && t.chainLine(c) === undefined && t.ruleCountOf(c) > 0) {
        t.partial.set(
          t.nameOf(c),
          'the paste starts inside its table: more of its rules may lie above',
        );
        t.cutAbove.add(t.nameOf(c));
      }
    // rows read above the paste's first Chain line: that chain's first rules lie above it
    for (const name of this.state.options.listView?.above ?? [])
      if (t.indexOf(name) >= 0) {
        t.partial.set(name, 'its Chain line is above the paste: more of its rules may lie above');
        t.cutAbove.add(name);
      }
    // a chain grep's window may cut (grep -A/-B/-C output): what lies past the window is unknown
    for (const cut of this.state.grep.cuts) {
      if (cut.table !== t) continue;
      const name = t.nameOf(cut.chain);
      if (!t.partial.has(name)) t.partial.set(name, cut.why);
      if (cut.side === 'before') t.cutAbove.add(name);
      this.state.warn('elided', cut.said, cut.line);
    }
    const last = this.state.lastTable === t ? this.state.lastChain : -1;
    // a COMMIT the paste holds ends its last chain; a rule of it not read (hidden by hand, a control
    // byte) already says why it is partial, and more tellingly than the paste's end
    if (
      last >= 0 &&
      !whole.has(last) &&
      (cut || (!declared && !t.committed && !t.partial.has(t.nameOf(last))))
    )
      t.partial.set(
        t.nameOf(last),
        cut
          ? `the ${this.noun} is cut inside it: more of its rules may lie past the cut`
          : 'the paste ends inside it and declares no chain: more of its rules may follow',
      );
    this.markDiff(t);
    this.markFiltered(t, this.wholeListed(t));
    this.markListRows(t);
    this.markListedRules(t);
    // the rule kube-proxy writes last in a Service's chain ends it: what the paste leaves out
    // after it (a cut, an elision, grep's window) holds none of its rules
    for (const name of [...t.partial.keys()]) {
      const c = t.indexOf(name);
      if (!t.cutAbove.has(name) && c !== this.cutIn && takesTheRest(t, c)) t.partial.delete(name);
    }
  }

  /** A diff's hunk (a review comment's ```diff) shows the lines around a change, as a grep
   * window does: the chains it holds rules of may have more above and below it. Only a table
   * read from its *table line to its COMMIT is whole there. */
  private markDiff(t: Table): void {
    if (this.state.diffAdded.length === 0) return;
    if (t.committed && !this.state.startsInside.has(t)) return;
    const added = new Set(this.state.diffAdded);
    for (let c = 0; c < t.chainCount; c++) {
      if (!t.ruleIdsOf(c).some((id) => added.has(t.line(id)))) continue;
      const name = t.nameOf(c);
      if (!t.partial.has(name))
        t.partial.set(
          name,
          "a diff's hunk shows only the lines around its change: more of its rules may lie above and below it",
        );
      t.cutAbove.add(name);
    }
  }

  /** The chains a grep without context options printed only the matching rules of: partial, its
   * reason said over a cut's (the grep, not the paste's end, is why). */
  private markFiltered(t: Table, whole: ReadonlySet<number>): void {
    for (const f of this.state.grep.filtered) {
      // -L's rows are read as rules in another spelling: their text is not what grep matched
      if (this.state.options.listView === undefined && !printedBy(t, f)) {
        this.notGrepped.add(f);
        continue;
      }
      // a chain another command listed whole: this grep's lines of it are some of those rules
      const chains = filteredChains(t, f, this.state.options.listView === undefined).filter(
        (c) => !whole.has(c),
      );
      for (const c of chains) {
        const name = t.nameOf(c);
        t.partial.set(
          name,
          `\`${excerpt(f.command, 60)}\` (line ${f.line}) printed only ${f.keeps}: its other rules are not in the paste`,
        );
        t.cutAbove.add(name);
      }
      if (chains.length > 0 && !this.saidFiltered.has(f)) {
        this.saidFiltered.add(f);
        this.state.warn(
          'view',
          `${f.start === f.end ? `line ${f.start} is` : `lines ${f.start}-${f.end} are`} the output of \`${excerpt(f.command, 60)}\` (line ${f.line}): only ${f.keeps}, so the chains they show are not whole: no share or count of their endpoints is stated`,
          f.line,
        );
      }
    }
  }

  /** The chains the paste lists whole: `iptables -S CHAIN` prints every rule of its chain, and a
   * grep whose fixed pattern every `-A CHAIN` line holds prints every rule of that chain (where it
   * printed one: a chain declared without any may have its rules past a cut). */
  private wholeListed(t: Table): Set<number> {
    const whole = new Set<number>();
    for (const typed of this.state.listedChains.get(t) ?? [])
      if (typed.chain !== undefined && !typed.part && t.indexOf(typed.chain) >= 0)
        whole.add(t.indexOf(typed.chain));
    if (this.state.options.listView !== undefined) return whole;
    for (const f of this.state.grep.filtered) {
      const within = (line: number | undefined) =>
        line !== undefined && line >= f.start && line <= f.end;
      const shown = filteredChains(t, f, true);
      for (let c = 0; c < t.chainCount; c++)
        if (!shown.includes(c) && t.ruleIdsOf(c).some((id) => within(t.line(id)))) whole.add(c);
    }
    return whole;
  }

  /** The chains an `iptables -L` row among save or -S rules may be a rule of (not read): the chain
   * of the rule before it and of the rule after it, in the same command's output. The chain after
   * it may have more rules above those read. */
  private markListRows(t: Table): void {
    const rows = this.state.foreign.get('iptables-list') ?? [];
    if (rows.length === 0 || this.state.options.listView !== undefined) return;
    // the rule lines of the table, with their chains, in line order
    const rules: [line: number, chain: number][] = [];
    for (let c = 0; c < t.chainCount; c++)
      for (const id of t.ruleIdsOf(c)) rules.push([t.line(id), c]);
    rules.sort((a, b) => a[0] - b[0]);
    const apart = (a: number, b: number) => this.state.grep.ends.some((end) => end >= a && end < b);
    for (const row of rows) {
      const next = rules.findIndex(([line]) => line > row);
      const after = next >= 0 ? rules[next] : undefined;
      const before = rules[(next >= 0 ? next : rules.length) - 1];
      const why = `line ${row} is a row of \`iptables -L\` among its rules, not read: it may be one of its rules`;
      if (after && !apart(row, after[0])) {
        t.partial.set(t.nameOf(after[1]), why);
        t.cutAbove.add(t.nameOf(after[1]));
      }
      if (before && before[1] !== after?.[1] && !apart(before[0], row))
        t.partial.set(t.nameOf(before[1]), why);
    }
  }

  /** The greps without context options whose output holds the rules read. */
  filteredBy(): Ruleset['filtered'] {
    return this.state.grep.filtered
      .filter((f) => !this.notGrepped.has(f))
      .map((f) => ({ command: f.command, line: f.line, keeps: f.keeps }));
  }

  /** The chains a typed `iptables -S CHAIN N` lists rule N of, that rule alone (the rules
   * before and after it not in the paste), or a pipe after `-S CHAIN` keeps some rules of. */
  private markListedRules(t: Table): void {
    for (const typed of this.state.listedChains.get(t) ?? []) {
      const part = typed.part;
      if (!part || t.indexOf(part.chain) < 0) continue;
      const n = (part.rule ?? 1) - 1;
      const above = n > 0 ? `rule${n > 1 ? `s 1-${n}` : ' 1'} before it and ` : '';
      const said = `\`${typed.command}\` (line ${typed.line})`;
      t.partial.set(
        part.chain,
        part.pipe !== undefined
          ? `${said} is piped through \`${excerpt(part.pipe, 40)}\`: any of its rules may be left out`
          : `${said} lists its rule ${part.rule} alone: ${above}any after it are not in the paste`,
      );
      if (n > 0 || part.pipe !== undefined) t.cutAbove.add(part.chain);
    }
  }

  /** The chains a typed `iptables -S CHAIN` lists, their -N (-P) line not in the paste: iptables
   * printed it first, then every rule of the chain, so the command declares the chain its rows
   * are in, at its line. */
  private declareListed(t: Table): void {
    for (const typed of this.state.listedChains.get(t) ?? []) {
      if (typed.chain === undefined) continue;
      const c = t.indexOf(typed.chain);
      if (c < 0 || t.chainLine(c) !== undefined || t.ruleCountOf(c) === 0) continue;
      t.chainIndex.setLine(c, typed.line);
      this.state.warn(
        'table',
        `the rules of ${typed.chain} are \`${typed.command}\`'s listing of that chain (line ${typed.line}), its -N line not in the paste: the chain is the one the command names, declared there`,
        typed.line,
      );
    }
  }

  /** A last line that does not lex: the paste was cut in the middle of it. */
  cutShort(reason: string, where = 'mid-rule'): void {
    this.state.cutTable = this.state.current ?? this.state.section;
    // the chain a cut rule names is the one the paste is cut inside
    const named = /^(?:\[\d+:\d+\] )?-A (\S+)/.exec(
      text(this.state.buf, this.state.lineStart, this.state.lineEnd),
    );
    const at = named && this.state.cutTable ? this.state.cutTable.indexOf(named[1]!) : -1;
    if (at >= 0)
      [this.state.lastTable, this.state.lastChain, this.cutIn] = [this.state.cutTable, at, at];
    // a chain the paste holds no other rule of: the chain before it ended whole
    else if (named) this.state.lastChain = -1;
    // an `iptables -L` line: what -L printed of it, as the paste shows it
    const listed = this.state.options.listView?.cut;
    const [why, shown] =
      listed?.line === this.state.lineNo
        ? [listed.reason, listed.text]
        : [reason, text(this.state.buf, this.state.lineStart, this.state.lineEnd)];
    this.state.warn(
      'truncated',
      `the ${this.noun} is cut at line ${this.state.lineNo}: it ends ${where} (${why}), not read: "${excerpt(shown)}"`,
    );
  }

  /** An `iptables -L` listing cut in or after a Chain line or a column header: the chain listed
   * before a Chain line is whole, the chain a column header is of has its rules past the cut. */
  cutInHead(cut: ListViewCut, chain: string | undefined): void {
    const t = this.state.section;
    this.state.cutTable = t;
    if (t)
      [this.state.lastTable, this.state.lastChain] = [
        t,
        chain === undefined ? -1 : t.indexOf(chain),
      ];
    this.state.warn(
      'truncated',
      cut.head?.read
        ? `the dump looks cut short after line ${cut.line}: the paste ends ${cut.reason}`
        : `the ${this.noun} is cut at line ${cut.line}: it ends ${cut.reason}, not read: "${excerpt(cut.text)}"`,
      cut.line,
    );
  }
}

/** A Service chain's last rule as kube-proxy writes it: the jump without a match (but its
 * comment) to the last endpoint's KUBE-SEP chain, taking every connection the rules above left. */
function takesTheRest(t: Table, c: number): boolean {
  const n = c < 0 ? 0 : t.ruleCountOf(c);
  if (n === 0 || !/^KUBE-(?:SVC|SVL)-/.test(t.nameOf(c))) return false;
  const id = t.ruleIdOf(c, n - 1);
  return (
    t.target(id)?.startsWith('KUBE-SEP-') === true &&
    t.probability(id) === undefined &&
    !t.checksRecent(id) &&
    !t.hasOtherMatches(id) &&
    !t.hasSource(id) &&
    t.destination(id) === undefined &&
    t.protocol(id) === undefined &&
    t.dport(id) === undefined
  );
}

/** A jump ending the line in a kube-proxy chain's name shorter than its 16 hash characters. */
export const CUT_NAME = / -[jg] (KUBE-(?:SVC|SVL|SEP|EXT|FW|XLB)-[A-Z0-9]{0,15})$/;

/** The jump a line ends in, to a kube-proxy chain of a fixed name. */
export const CUT_FIXED_TARGET = / -[jg] (KUBE-[A-Z-]*)$/;
/** kube-proxy's chains of fixed names (iptables and IPVS modes). */
const FIXED_KUBE_CHAINS = [
  'KUBE-MARK-MASQ',
  'KUBE-MARK-DROP',
  'KUBE-SERVICES',
  'KUBE-NODEPORTS',
  'KUBE-POSTROUTING',
  'KUBE-FIREWALL',
  'KUBE-FORWARD',
  'KUBE-EXTERNAL-SERVICES',
  'KUBE-PROXY-FIREWALL',
  'KUBE-LOAD-BALANCER',
  'KUBE-NODE-PORT',
];
/** A name cut before its end: a strict beginning of a fixed name's, and of no whole one. */
export const cutFixedName = (name: string) =>
  !FIXED_KUBE_CHAINS.includes(name) &&
  FIXED_KUBE_CHAINS.some((c) => c.startsWith(name)) &&
  !/^KUBE-(?:SVC|SVL|SEP|EXT|FW|XLB)-/.test(name);
