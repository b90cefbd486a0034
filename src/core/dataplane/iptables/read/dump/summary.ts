// What the paste held besides the dump, said once at the end of the pass: lines read in bulk
// (prefixes, repeats, other tools' listings), one log merged, other kube-proxy modes.
import { foreignText, type ForeignKind } from '../paste/other-lines/classify.js';
import { isLog } from '../paste/other-lines/logs.js';
import { DumpLines } from './lines.js';

export abstract class DumpSummary extends DumpLines {
  /** One warning for each kind of line that is read in bulk: prefixes, repeats, listings. */
  protected summarise(): void {
    const list = (lines: number[]) =>
      lines.length <= 8 ? lines.join(', ') : `${lines.slice(0, 8).join(', ')} ... ${lines.at(-1)}`;
    if (this.prefixed.length > 0)
      this.warn(
        'prefix',
        `${this.prefixed.length} line${this.prefixed.length === 1 ? '' : 's'} had a prefix before the dump line (grep -n / grep -H / a prompt): stripped and read (line${this.prefixed.length === 1 ? '' : 's'} ${list(this.prefixed)})`,
        this.prefixed[0]!,
        this.prefixed,
      );
    // a diff of rules (a test's expectation, a review): its new side is read, the old one is not
    const [added, removed] = [this.diffAdded, this.diffRemoved];
    if (added.length > 0)
      this.warn(
        'prefix',
        `a diff: the rules it adds ("+" before each) are read without the "+", with its context lines, as its new side (line${added.length === 1 ? '' : 's'} ${list(added)})${removed.length > 0 ? `; the rule line${removed.length === 1 ? '' : 's'} it removes ("-") ${removed.length === 1 ? 'is' : 'are'} not read (line${removed.length === 1 ? '' : 's'} ${list(removed)})` : ''}`,
        added[0]!,
        added,
      );
    if (this.logged.length > 0)
      this.warn(
        'log',
        `rules kube-proxy logged (the input it gave iptables-restore), read after the log's prefix: what kube-proxy wrote or tried to write, not read back from the node (its log says whether iptables-restore took them; \`iptables-save\` there shows what the node holds) (line${this.logged.length === 1 ? '' : 's'} ${list(this.logged)})`,
        this.logged[0]!,
        this.logged,
      );
    const { copies, reruns } = this.ruleRepeats;
    if (copies.length > 0)
      this.warn(
        'duplicate',
        `${copies.length} rule line${copies.length === 1 ? '' : 's'} repeat${copies.length === 1 ? 's' : ''} an earlier one (pasted twice?): read once (line${copies.length === 1 ? '' : 's'} ${list(copies)})`,
        copies[0]!,
        copies,
      );
    if (reruns.length > 0)
      this.warn(
        'duplicate',
        `${reruns.length} rule line${reruns.length === 1 ? '' : 's'} repeat${reruns.length === 1 ? 's' : ''} the rules an earlier command printed (the command run again; where counters are printed, only they may differ): the same rule${reruns.length === 1 ? '' : 's'}, read once (line${reruns.length === 1 ? '' : 's'} ${list(reruns)})`,
        reruns[0]!,
        reruns,
      );
    // -L's rows among rules read: those lines are -L's, not the paste's kind
    const ruled = [...this.tables, this.section].some((t) => (t?.ruleCount ?? 0) > 0);
    for (const [kind, lines] of this.foreign) {
      const at = `line${lines.length === 1 ? '' : 's'} ${list(lines)}`;
      this.warn(
        'foreign',
        kind === 'iptables-list' && ruled
          ? `${at}: a row of \`iptables -L\` (its target, prot, opt, source and destination columns) among rules as iptables-save and -S print them: not read, the rules around it are`
          : `${at} not read: ${foreignText(kind, this.unopenedBy(kind))}`,
        lines[0]!,
        lines,
      );
    }
  }

  /** The tables the lines of `kind` (iptables failing to open one) name, in the order named. */
  protected unopenedBy(kind: ForeignKind): string[] {
    return [...(this.unopened.get(kind) ?? [])];
  }

  /** A component's log lines whose file or words name no component (shared_informer.go,
   * iptables.go) are of the log the paste's other lines name: one log, said once. */
  protected mergeLogs(): void {
    const other = this.foreign.get('other-log');
    const named = [...this.foreign]
      .filter(([kind]) => isLog(kind) && kind !== 'other-log')
      .sort((a, b) => b[1].length - a[1].length)[0];
    if (!other || !named) return;
    this.foreign.set(
      named[0],
      [...named[1], ...other].sort((a, b) => a - b),
    );
    this.foreign.delete('other-log');
  }

  /** Other kube-proxy modes whose rules an iptables dump shows only in part: said once each. */
  protected proxyModes(): void {
    const nat = this.tables.find((t) => t.name === 'nat');
    if (!nat) return;
    const has = (...names: string[]) => names.some((n) => nat.indexOf(n) >= 0);
    const services = nat.indexOf('KUBE-SERVICES');
    let matchSet = false; // IPVS mode's KUBE-SERVICES starts with its ipset rules
    for (let k = 0; services >= 0 && k < Math.min(20, nat.ruleCountOf(services)); k++)
      matchSet ||= nat.text(nat.ruleIdOf(services, k)).includes('--match-set KUBE-CLUSTER-IP');
    // its chains, declared or only jumped to (two KUBE-SERVICES rules quoted alone)
    const ipvsChains = ['KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER', 'KUBE-LOOP-BACK'];
    if (matchSet || has(...ipvsChains) || nat.jumpsTo(ipvsChains)) {
      let leftovers = 0;
      for (let c = 0; c < nat.chainCount; c++) if (nat.kindOf(c) !== undefined) leftovers++;
      this.warn(
        'mode',
        `IPVS mode: the Services are in IPVS, read them with \`ipvsadm -Ln\`${leftovers > 0 ? `; the ${leftovers} KUBE-SVC/KUBE-SEP chains here are leftovers from iptables mode` : ''}`,
        null,
      );
    }
    // the portal chains, declared or only jumped to from the built-in chains (a listing's segment)
    const jumped = (...names: string[]) => nat.jumpsTo(names, ['PREROUTING', 'OUTPUT']);
    const portals = ['KUBE-PORTALS-CONTAINER', 'KUBE-PORTALS-HOST', 'KUBE-NODEPORT-CONTAINER'];
    if (has(...portals) || jumped(...portals))
      this.warn(
        'mode',
        'userspace mode: kube-proxy itself proxies each Service on a port of its own (the portal rules send traffic there); the endpoints are not in iptables',
        null,
      );
  }

  /** The other tool's listing most of the input was, for the error when nothing else was; none
   * where such lines are a few among prose (a README's "}" is no nft listing). */
  protected mainForeign(): ForeignKind | undefined {
    const seen = [...this.foreign.values()].reduce((n, lines) => n + lines.length, 0);
    if (seen * 4 < this.nonBlank) return undefined;
    // nft's errors quote the rules it refused: what the paste is, whatever they quote
    if (this.foreign.has('nft-error')) return 'nft-error';
    // nft's crash in place of a listing: what the paste is, whatever else was typed around it
    if (this.foreign.has('nft-crash')) return 'nft-crash';
    let best: ForeignKind | undefined;
    for (const [kind, lines] of this.foreign) {
      if (kind === 'kube-proxy-nft') return kind; // its tables sit among iptables-nft's
      if (!best || lines.length > this.foreign.get(best)!.length) best = kind;
    }
    return best;
  }
}
