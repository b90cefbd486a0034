// The dump parser's collaborator for rule lines: one rule, or several run together on a line
// (./run-together.ts); a rule pasted twice read once (../repeats.ts), one that does not read as it
// stands said (./unread-rules.ts).
import { LineSyntaxError, text } from '../../lexer.js';
import { cutDnatPort, cutTargetOption } from '../../paste/mangled/cut-option.js';
import { excerpt } from '../../../../../sanitize.js';
import { CUT_FIXED_TARGET, CUT_NAME, cutFixedName, type Cuts } from '../cuts.js';
import { lineFamily } from '../families.js';
import type { Sections } from '../sections.js';
import { NL, type ParserState } from '../parser-state.js';
import { holdsNatRules, isFilterReject } from '../which-table.js';
import { Table } from '../../table.js';
import { RunTogetherRules, type LineReader } from './run-together.js';
import { UnreadRules, controlByte } from './unread-rules.js';

export class RuleLines {
  private natRules: boolean | undefined; // whether the paste holds nat-only rules, no table lines
  private filterPart: Table | undefined; // the filter table headerless REJECT rules are read in
  private readonly runTogether: RunTogetherRules;
  private readonly unread: UnreadRules;

  constructor(
    private readonly state: ParserState,
    private readonly sections: Sections,
    private readonly cuts: Cuts,
    reader: LineReader,
  ) {
    this.runTogether = new RunTogetherRules(state, reader, this);
    this.unread = new UnreadRules(state, sections, cuts);
  }

  /** A rule line, or several run together on one; the last part alone may be cut. */
  rules(s: number, e: number, last: boolean): void {
    this.runTogether.rules(s, e, last);
  }

  /** A line typed at a prompt whose command's output runs on from its end: said, and the output
   * read from there; false where the line holds none. */
  promptOutput(s: number, e: number, last: boolean): boolean {
    return this.runTogether.promptOutput(s, e, last);
  }

  rule(lineStart: number, a: number, lineEnd: number, last: boolean): void {
    const specStart = a + 3;
    let e = lineEnd;
    // a copy of rules above, cut by the paste's end inside its last line: read with them
    if (last && this.state.ruleRepeats.cutCopy(lineStart, e)) {
      this.state.ruleRepeats.copies.push(this.state.lineNo);
      return;
    }
    // the last line only "-A", or "-A" and a word: cut before, after or inside the chain's name
    if (last && !this.state.options.listView && e - a < 4)
      return this.cuts.cutShort('a rule cut before its chain name');
    if (e - a < 4) this.state.fail('expected "-A CHAIN ..."');
    // iptables-save ends every line with a newline: a node's recorded dump whose last line has
    // none was cut in it (a paste's may have lost it in copying: said below, read); past the last
    // COMMIT no table is open to be cut, and the line is said not read as any such line is
    const unterminated = last && this.state.buf.indexOf(NL, e) < 0;
    if (unterminated && this.state.options.noun === 'dump' && !this.sections.outsideTables())
      return this.cuts.cutShort(
        'its line has no newline, which iptables-save ends every line with',
      );
    try {
      this.state.lex.lex(specStart, e);
    } catch (err) {
      // looked for only where the line does not read: a dump's 440,000 rules are not scanned twice
      const note = err instanceof LineSyntaxError ? this.unread.noteAfter(specStart, e) : -1;
      if (note < 0) return this.unread.unreadable(err, specStart, e, last);
      e = note;
    }
    // iptables-save prints no control byte (a BEL, an escape sequence's ESC): a rule of a node's
    // recorded dump that reads and holds one was not written by it as it reads (an address
    // "10.244.1.7:80\x07"): not read (a paste's copying artefacts are undone in paste/)
    const control =
      this.state.options.noun === 'dump' ? controlByte(this.state.buf, specStart, e) : -1;
    if (control >= 0) return this.unread.controlled(specStart, e, control);
    if (last && !this.state.options.listView && /^\S+$/.test(text(this.state.buf, specStart, e))) {
      const [table, chain] = [this.state.lastTable, this.state.lastChain];
      this.cuts.cutShort('a rule cut at its chain name');
      // a name cut short may be the chain before it's, going on past the cut
      const word = text(this.state.buf, specStart, e);
      if (table && chain >= 0 && table.nameOf(chain).startsWith(word))
        [this.state.lastTable, this.state.lastChain] = [table, chain];
      return;
    }
    // kube-proxy writes every rule with a target: one without, where the input ends without its
    // newline, stopped mid-rule; so is the `iptables -L` line the listing says it cut (whatever
    // follows it: a final newline, blank lines); a kube-proxy chain's last line without one is
    // cut, whatever an editor put after it (a newline)
    const cutInView = this.state.options.listView?.cut?.line === this.state.lineNo;
    // the rule's text, made only where it is looked at: 440,000 rules' strings cost a dump's read
    const spec = last || !this.state.current ? text(this.state.buf, specStart, e) : '';
    const kubeChain = spec.startsWith('KUBE-');
    const end = last && (e === this.state.buf.length || kubeChain) && !this.state.options.listView;
    if ((cutInView || end) && !this.state.lex.hasTarget())
      return this.cuts.cutShort('a rule without its target');
    // a jump to a name cut before its end ("-j KUBE-MARK-", "-j KUBE-SERV"): not read
    const cutTarget = end ? CUT_FIXED_TARGET.exec(spec)?.[1] : undefined;
    if (cutTarget !== undefined && cutFixedName(cutTarget))
      return this.cuts.cutShort(`a rule cut inside its target's name ("${cutTarget}")`);
    // "-j MARK --set-xm", "-j DNAT --to-destination": cut in or after an option's name
    const cutOption = end ? (cutTargetOption(spec) ?? cutDnatPort(spec)) : undefined;
    if (cutOption !== undefined) return this.cuts.cutShort(cutOption);
    // kube-proxy names its chains with 16 hash characters: fewer at the input's very end is a cut
    // (an -L row prints more columns after its target: its end is not the name's)
    const cutName = end ? CUT_NAME.exec(spec)?.[1] : undefined;
    const t = this.state.lex.tokens;
    // an elision just above, in the same table: rules of this one's chain may be left out with it
    const open = this.state.current ?? this.state.section;
    const elision = this.state.elisionAbove?.table === open ? this.state.elisionAbove : undefined;
    this.state.elisionAbove = undefined;
    // headerless, the other family's rule starts the other family's dump (grep of both saves)
    const family = this.state.current ? undefined : lineFamily(spec);
    if (
      family &&
      this.state.section &&
      this.state.sectionFamily &&
      family !== this.state.sectionFamily &&
      !this.state.tables.some((x) => x.family === family)
    ) {
      this.sections.closeSection();
      this.moveDeclarations();
    }
    this.state.againDeclared = [];
    if (this.sections.outsideTables()) return this.state.skip('stray');
    const table =
      this.filterReject(spec || text(this.state.buf, specStart, e)) ?? this.sections.target();
    const near = this.state.lastTable === table ? this.state.lastChain : -1;
    const chain = table.chainIndex.chainAt(t[0]!, t[1]!, near);
    if (this.state.options.listView?.broken.includes(this.state.lineNo)) {
      const name = table.nameOf(chain);
      table.partial.set(name, 'a rule of it is not in the paste: -L printed only its counters');
      return this.state.warn(
        'counters',
        `a rule of ${name} not read: the line holds only the columns -L prints before its target, and the rest of its row is not in the paste, so its chain is not claimed whole`,
      );
    }
    this.state.lastTable = table;
    const resumed = chain !== near && table.ruleCountOf(chain) > 0;
    this.state.lastChain = chain;
    const save = this.state.current?.startLine;
    const r = { s: lineStart, a, e };
    if (this.state.ruleRepeats.check(table, chain, resumed, r, this.state.lineNo, save)) return;
    // a chain's rules resumed after another's: kube-proxy's restore input, not iptables-save
    if (resumed) this.state.interleaved.add(table);
    try {
      table.addRule(this.state.lex, chain, lineStart, specStart, e, this.state.lineNo);
    } catch (err) {
      return this.unread.unreadable(err, specStart, e, false);
    }
    this.state.ruleRepeats.added(table, chain, a, e);
    if (!this.state.current) this.state.sectionHasRules = true;
    if (!this.state.current) this.state.sectionFamily ??= family;
    this.state.grep.rule(table, chain, this.state.lineNo);
    // the first rule after an elision: rules of its chain before it may be among those left out
    if (elision) {
      const chains = this.state.elidedAbove.get(table) ?? [];
      chains.push(chain); // grep -A's 100k "--": not a copy each
      this.state.elidedAbove.set(table, chains);
    }
    if (cutName) this.cuts.cutInName(table, cutName);
    // a last word of digits (a port, an address, a probability, a mark) may be the start of
    // another value; a name (a verdict, a whole chain's) is whole or said cut above
    else if (unterminated && !this.state.options.listView && /[\d.:/]$/.test(spec))
      this.state.warn(
        'unterminated',
        `the paste's last line has no newline after it (iptables-save ends every line with one): the paste may be cut there, its last word short ("${excerpt(spec.split(' ').at(-1)!, 40)}"); the rule is read as it stands`,
      );
  }

  /** The filter table a headerless REJECT (or DROP) rule of kube-proxy's filter chains is read
   * in, where the paste's other headerless rules are nat's and no command names their table (a
   * grep of a whole save); undefined for any other rule, and for a DROP of a chain the open
   * section declares (an `iptables -S CHAIN` listing: its table is the section's). */
  private filterReject(spec: string): Table | undefined {
    if (this.state.current || this.state.options.table || this.state.typed || !isFilterReject(spec))
      return undefined;
    const open = this.state.section;
    if (open && this.state.typedFor.has(open)) return undefined;
    const chain = spec.slice(0, spec.indexOf(' '));
    if (open && !/ -j REJECT(?: |$)/.test(spec) && open.chain(chain) !== undefined)
      return undefined;
    this.natRules ??= holdsNatRules(text(this.state.buf, 0, this.state.buf.length));
    if (!this.natRules) return undefined;
    if (this.filterPart) return this.filterPart;
    const t = (this.filterPart = new Table('filter', this.state.buf, this.state.lineNo));
    t.family = lineFamily(spec) ?? this.state.saveFamily ?? 'IPv4';
    this.state.settled.add(t);
    this.state.tables.push(t);
    this.state.warn(
      'table',
      / -j REJECT(?: |$)/.test(spec)
        ? `rules from line ${this.state.lineNo} read as the filter table (no *filter line): kube-proxy writes its REJECT rules for Services without endpoints there, and iptables takes no REJECT in nat`
        : `rules from line ${this.state.lineNo} read as the filter table (no *filter line): iptables takes no DROP in nat (not a table for filtering), and the kubelet's and kube-proxy's drops are filter's`,
    );
    return t;
  }

  /** Chains declared again just above the other family's first rule: that dump's, not a repeat. */
  private moveDeclarations(): void {
    const moved = new Set(this.state.againDeclared.map((d) => d.line));
    if (moved.size === 0) return;
    this.state.warnings = this.state.warnings.filter(
      (w) => w.kind !== 'duplicate' || !moved.has(w.line ?? 0),
    );
    const [lineNo, lineStart] = [this.state.lineNo, this.state.lineStart];
    for (const d of this.state.againDeclared) {
      [this.state.lineNo, this.state.lineStart] = [d.line, d.s - 1]; // the new table starts at its first
      const table = this.sections.target();
      table.chainIndex.setLine(table.chainIndex.chainAt(d.s, d.e), d.line);
    }
    [this.state.lineNo, this.state.lineStart] = [lineNo, lineStart];
  }
}
