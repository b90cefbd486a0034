// What people paste around a rules dump: shell prompts, prose, `grep -n` prefixes, log lines, and
// listings of other tools. The parser asks here only about lines that are not dump lines, so a
// clean dump never pays for it.
import { ELISION } from '../../../../paste/elisions.js';
import type { ForeignKind } from './foreign-kinds.js';
import { FOREIGN_LINES, INCOMPATIBLE, kubeProxySetLine } from './foreign-lines.js';
import { logLine } from './logs.js';
import { COMMANDS, LISTING, PROMPT } from './prompts.js';

/** Why a line was skipped or doubted (JSON `warnings[].kind`). */
export type WarningKind =
  | 'blank'
  | 'prompt' // a shell prompt and the command typed after it
  | 'command' // a command line without a prompt (`sudo iptables-save`, `iptables -I ...`)
  | 'prose'
  | 'comment' // a "# ..." line iptables-save does not print: an author's note, no rule
  | 'elided' // `...`, `--- snip ---` (../../elisions.ts), grep's `--`: part of the paste left out
  | 'fence' // markdown ``` fences
  | 'log' // klog / kubectl log lines
  | 'foreign' // a line of another tool's listing (see ForeignKind)
  | 'prefix' // grep -n / grep -H / prompt prefixes stripped, the rule after them read
  | 'duplicate' // a line pasted twice, read once
  | 'joined' // several rules on one line (the line ends lost in copying), each read
  | 'stray' // a rule after a whole dump's last COMMIT, in no table: not read
  | 'redacted' // a rule whose address its author hid (51.254.xxx.xxx): not read, its chain partial
  | 'control' // a rule holding a control byte iptables-save never prints: not read, its chain partial
  | 'counters' // a rule's counters on a line of their own (iptables-save -c's [0:0], -L -v's)
  | 'truncated' // the dump looks cut short
  | 'unterminated' // the paste's last line, read, has no newline after it: it may be cut short
  | 'table' // which table a listing without `*table` belongs to
  | 'backend' // iptables-legacy / iptables-nft, and iptables-nft's "legacy tables present" warning
  | 'mode' // the dump is of another kube-proxy mode (IPVS, userspace)
  | 'view'; // an `iptables -L` listing read as rules, and what it does not show

/** A line that is not a dump line: what it is, or the rule left after a known prefix. */
export type LineClass =
  | { kind: 'prefix'; rest: number; log?: true } // the dump line starts at byte `rest` (in a log)
  | { kind: Exclude<WarningKind, 'prefix' | 'foreign'> }
  | { kind: 'foreign'; foreign: ForeignKind };

/** What the bytes after a stripped prefix must start with to be read as a dump line. */
const DUMP_LINE =
  /^(?:-[ANP] |:\S|\*[a-z]|COMMIT$|# (?:Generated|Completed|Warning)|\[\d+:\d+\] -A )/;

const PREFIXES = [
  /^(?:[^\s:]+:)?\d+[:-]/, // grep -n (and -Hn): "123:" or "dump.txt:123:", context lines "123-"
  /^[^\s:]+:/, // grep -H: "dump.txt:"
  /^\$ +/, // a "$ " prompt left on the line
  /^[+>] ?/, // diff's "+", a quote's "> "
  /^(?:-{2,}|={2,})> ?/, // an arrow an author drew to point at the rule ("--> -A KUBE-SVC-...")
];

/** iptables-nft's note that the legacy backend holds tables too (after `iptables -L`, or as a
 * comment in iptables-nft-save). */
export const LEGACY_WARNING = /^(?:# )?Warning: iptables-legacy tables present/;

const TIMESTAMP = /^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|time="|level=|\{"(?:level|ts|time)")/;

/** What a line that is not a dump line is, given its text (without leading blanks). */
export function classifyLine(line: string): LineClass {
  if (line.length === 0) return { kind: 'blank' };
  // iptables-nft's refusal, whoever's log quotes it: why no rule could be listed
  if (INCOMPATIBLE.test(line)) return { kind: 'foreign', foreign: 'iptables-nft-incompatible' };
  const log = logLine(line);
  if (log) {
    // kube-proxy logging the input it gives iptables-restore: a rule after its journald prefix,
    // the first after its words "Restoring iptables rules: "
    const said = line.slice(log.at);
    const restoring = /^Restoring iptables rules: /.exec(said)?.[0].length ?? 0;
    const rest = said.slice(restoring);
    if ((restoring > 0 || log.kind === 'kube-proxy-log') && DUMP_LINE.test(rest))
      return { kind: 'prefix', rest: line.length - rest.length, log: true };
    return { kind: 'foreign', foreign: restoring > 0 ? 'kube-proxy-log' : log.kind };
  }
  for (const p of PREFIXES) {
    const m = p.exec(line);
    if (m && m[0].length < line.length && DUMP_LINE.test(line.slice(m[0].length).trimStart()))
      // the rule starts after the prefix and the blanks after it
      return {
        kind: 'prefix',
        rest: m[0].length + /^[ \t]*/.exec(line.slice(m[0].length))![0].length,
      };
  }
  if (/^(?:```|~~~)/.test(line)) return { kind: 'fence' };
  // an author's elision, or grep's "--" between the groups it printed: lines left out either way
  if (ELISION.test(line.trim())) return { kind: 'elided' };
  if (TIMESTAMP.test(line)) return { kind: 'log' };
  if (LEGACY_WARNING.test(line)) return { kind: 'backend' };
  // another tool's line may be quoted ("> ") or in a diff ("+") too
  const bare = line.replace(/^(?:[+>] ?)+/, '').trimStart();
  for (const [re, foreign] of FOREIGN_LINES)
    if (re.test(bare))
      // a set kube-proxy makes, by its name: the others are not called its
      return {
        kind: 'foreign',
        foreign: foreign === 'ipset' && kubeProxySetLine(bare) ? 'kube-proxy-ipset' : foreign,
      };
  if (PROMPT.test(line) || (line.startsWith('# ') && COMMANDS.test(line.slice(2))))
    return { kind: 'prompt' };
  // a root prompt or an inline-code backtick glued to a listing command ("#ip6tables -nvL",
  // "`iptables-save"): the command typed all the same
  if (/^[#`]/.test(line) && LISTING.test(line.slice(1)))
    return { kind: line.startsWith('#') ? 'prompt' : 'command' };
  // a prompt naming the host and the directory ("gentoo ~ # ", "node1 coreos-install # "), where
  // a command follows it
  const dirPrompt = /^\S+ \S+ [$#] /.exec(line);
  if (dirPrompt && COMMANDS.test(line.slice(dirPrompt[0].length))) return { kind: 'prompt' };
  // a command quoted ("> iptables -L -n") is the command all the same
  if (COMMANDS.test(line) || COMMANDS.test(bare) || /^-[IDXFRZCLS]\b/.test(line))
    return { kind: 'command' };
  return { kind: 'prose' };
}

/** The words a warning uses for a skipped line of this kind. */
export const SKIPPED_AS: Record<string, string> = {
  blank: 'a blank line',
  prompt: 'a shell prompt',
  command: 'a command, not a line of its output',
  prose: 'not a line of iptables-save or iptables -S output',
  elided: 'an elision',
  fence: 'a markdown fence',
  log: 'a log line',
  stray: 'a line outside any *table ... COMMIT block, not read',
};
