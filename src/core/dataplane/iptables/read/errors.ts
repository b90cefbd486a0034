// What a parse throws: IptablesParseError for a line it cannot read (FILE:LINE and why), and
// NoRulesError for input that holds no rule, saying what it holds instead and what to run.
import {
  foreignText,
  HOST_NAMES,
  isHost,
  type ForeignKind,
  type HostKind,
} from './paste/other-lines/foreign-kinds.js';
import { nftErrorSaid, type NftErrors } from './paste/other-lines/nft-errors.js';
import { LOG_NAMES, type LogKind } from './paste/other-lines/logs.js';
import type { ParseOptions } from './ruleset.js';
import { escapeControls, excerpt } from '../../../sanitize.js';
import { readAs } from '../../listing-error.js';

/** Bad input: where it is and what is wrong. The CLI prints `FILE:LINE: read as iptables rules:
 * message` (the kind left out where the reason names iptables). */
export class IptablesParseError extends Error {
  /** The error in one line, FILE:LINE first: what a finding or a screen says of it. */
  readonly headline: string;
  constructor(
    readonly file: string,
    readonly line: number,
    readonly lineText: string,
    readonly reason: string,
  ) {
    const headline = `${file}:${line}: ${readAs('iptables rules', /\biptables\b/i, reason)}${escapeControls(reason)}`;
    super(`${headline}${lineText ? `\n  ${excerpt(lineText, 200)}` : ''}`);
    this.headline = headline;
    this.name = 'IptablesParseError';
  }
}

/** What the input held when it held no rule: how many lines, and the legacy-tables warning. */
export interface NoRulesDetail {
  /** Lines that were not blank. */
  lines: number;
  /** The line of iptables-nft's "iptables-legacy tables present" warning. */
  legacyWarning?: number;
  /** The lines of iptables-save -c counters ("[12:720]") whose rule is not in the paste. */
  counters?: number[];
  /** How the text came, where the caller knows: a file saved, or a pipe. */
  source?: ParseOptions['source'];
  /** Lines of iptables commands typed that change rules (`iptables -t nat -A ...`): what was
   * typed, not a listing of what the node holds. */
  typedRules?: number[];
  /** What the paste's one cut line was (a rule stopped before its end), as its warning says. */
  cut?: string;
  /** Rows of `iptables -L` no Chain line, typed -L or kube-proxy's writing names the chain of. */
  chainless?: number[];
  /** The table those rows' targets show they are in (REJECT: filter), where they show one. */
  chainlessTable?: string;
  /** nft's error reports the paste is, the first quoted in the message. */
  nftErrors?: NftErrors;
  /** The tables iptables' errors say it could not open (the kernel lacks them). */
  unopened?: string[];
  /** The IPVS proxier's chains kube-proxy's log names (its mode). */
  ipvsChains?: string[];
  /** How a Cilium `map get` paste prints its ports (cilium/read/other-lines/map-get.ts). */
  ports?: string;
  /** Components' logs among lines no listing is most of: whose, with their lines. */
  logs?: { kind: LogKind | HostKind; lines: number[] }[];
}

/** Input with no rule in it at all: empty, or another tool's listing (named, with what to run). */
export class NoRulesError extends Error {
  /** The whole message: it is one line. */
  readonly headline: string;
  constructor(
    readonly file: string,
    readonly foreign: ForeignKind | undefined,
    readonly detail?: NoRulesDetail,
  ) {
    super(noRulesMessage(file, foreign, detail));
    this.headline = this.message;
    this.name = 'NoRulesError';
  }
}

function noRulesMessage(file: string, foreign?: ForeignKind, d?: NoRulesDetail): string {
  const legacy =
    d?.legacyWarning !== undefined
      ? `; line ${d.legacyWarning} is iptables-nft's warning that the legacy backend holds tables: kube-proxy's rules are likely there, run \`iptables-legacy-save\``
      : '';
  if (d?.nftErrors?.typed)
    return `${file}: this is nft's error for a command typed (Error: ..., the command, carets under the part it refused), not a listing: no rule, set or map of the node is in the paste; nft said on ${nftErrorSaid(d.nftErrors)}${/No such file or directory/.test(d.nftErrors.said) ? ' (ENOENT: the table, chain or set the command names is not on the node; a kube-proxy in nftables mode keeps its table as `ip kube-proxy` and `ip6 kube-proxy`)' : ''}${legacy}`;
  if (foreign && d?.nftErrors)
    return `${file}: ${foreignText(foreign, [])}; nft said on ${nftErrorSaid(d.nftErrors)}${legacy}`;
  if (foreign)
    return `${file}: ${foreignText(foreign, d?.unopened ?? [], d?.ipvsChains ?? [])}${d?.ports ? `; ${d.ports}` : ''}${legacy}`;
  if (d?.counters !== undefined) {
    const one = d.counters.length === 1;
    return `no iptables rules in ${file}: line${one ? '' : 's'} ${d.counters.join(', ')} hold${one ? 's' : ''} only the packet and byte counters iptables-save -c prints before a rule, and the rule${one ? '' : 's'} they count ${one ? 'is' : 'are'} not in the paste${d.lines > d.counters.length ? `; no other line is a line of iptables-save or iptables -S` : ''}${legacy}`;
  }
  if (d?.chainless?.length) {
    const one = d.chainless.length === 1;
    // kube-proxy's Service rules are in nat: the table asked for where the rows do not show theirs
    const table = d.chainlessTable ?? 'nat';
    const shown = d.chainlessTable
      ? ` (${one ? 'its target is' : 'their targets are'} the ${table} table's)`
      : '';
    return `no iptables rules read in ${file}: line${one ? '' : 's'} ${d.chainless.join(', ')} ${one ? 'is a row' : 'are rows'} of \`iptables -L\` without ${one ? 'its' : 'their'} Chain line${shown}, and neither the paste nor a -L typed in it names the chain ${one ? 'it is' : 'they are'} in: run \`iptables -t ${table} -L CHAIN -n -v\` naming the chain, or \`iptables-save -t ${table}\`${legacy}`;
  }
  if (d?.cut) return `no whole iptables rule in ${file}: ${d.cut}${legacy}`;
  if (d?.typedRules?.length) {
    const one = d.typedRules.length === 1;
    const others = d.lines > d.typedRules.length;
    return `no iptables rules in ${file}: line${one ? '' : 's'} ${d.typedRules.join(', ')} ${one ? 'is an iptables command' : 'are iptables commands'} typed to change rules (-A/-I/-N/-D ...), not a listing of what the node holds${others ? `, and no other line is a line of iptables-save or iptables -S` : ''}: run \`iptables-save\` on the node after ${one ? 'it' : 'them'} and give kdebug that${legacy}`;
  }
  if (d && d.lines > 0)
    return `no iptables rules in ${file}: ${d.lines === 1 ? 'its one line is not' : `none of its ${d.lines} lines is`} a line of iptables-save or iptables -S (a prompt, prose, another tool's output)${logsAmong(d.logs)}${legacy}`;
  // an empty pipe is a command that failed before it; an empty file was saved without rules
  if (d?.source === 'pipe')
    return `no iptables rules in ${file} (empty input often means the command before the pipe failed: run \`sudo iptables-save\` alone to see its error)`;
  if (d?.source === 'file')
    return `no iptables rules in ${file}: the file is empty (on the node, \`sudo iptables-save > FILE\` saves them)`;
  return `no iptables rules in ${file}: it is empty`;
}

/** The logs named among the paste's other lines: "; lines 6, 7 are the kubelet's log ...". */
const logsAmong = (logs: NoRulesDetail['logs']): string =>
  (logs ?? [])
    .map(
      (l) =>
        `; line${l.lines.length === 1 ? ` ${l.lines[0]} is` : `s ${l.lines.join(', ')} are`} ${isHost(l.kind) ? HOST_NAMES[l.kind] : `${LOG_NAMES[l.kind]}: what it did, not what rules the node holds`}`,
    )
    .join('');
