// Rules written as typed in a shell, each line but the last ending in " \" (a line continuation):
// "-A KUBE-SERVICES -d 10.96.0.10/32 \" then "-p tcp ... -j KUBE-SVC-...". iptables-save never
// prints one, so each is read as the one rule it stands for; the lines it went on to are left
// blank, so line numbers stay the paste's.

/** A rule line (iptables-save's -A, counters before it) a continuation carries on. */
const RULE = /^(?:\[\d+:\d+\] )?-A \S/;
/** A shell's line continuation: a backslash after a blank, ending the line. */
const GOES_ON = /\s\\$/;

export interface Continued {
  text: string;
  /** Each rule continued, as the line it starts on and its last line, 1-based. */
  rules: { from: number; to: number }[];
}

/** The paste with each continued rule on one line, or undefined where none is. */
export function joinContinued(text: string): Continued | undefined {
  const lines = text.split('\n');
  const rules: Continued['rules'] = [];
  for (let i = 0; i < lines.length; i++) {
    let rule = lines[i]!.replace(/\r$/, '');
    if (!RULE.test(rule) || !GOES_ON.test(rule)) continue;
    const from = i;
    // the rule goes on while its line ends in a continuation and a line follows it
    while (GOES_ON.test(rule) && i + 1 < lines.length && lines[i + 1]!.trim() !== '') {
      rule = `${rule.slice(0, -1).trimEnd()} ${lines[++i]!.trim()}`;
      lines[i] = '';
    }
    if (i === from) continue;
    lines[from] = rule;
    rules.push({ from: from + 1, to: i + 1 });
  }
  return rules.length > 0 ? { text: lines.join('\n'), rules } : undefined;
}

/** Whether the paste's head holds a continued rule. */
export const hasContinued = (head: string): boolean =>
  head.split('\n').some((l, i, all) => {
    const line = l.replace(/\r$/, '');
    return RULE.test(line) && GOES_ON.test(line) && (all[i + 1] ?? '').trim() !== '';
  });

/** What is said of them, at the first: each continued rule's lines. */
export const continuedNote = (rules: Continued['rules']): string =>
  `line${rules.length === 1 ? 's' : ' runs'} ${rules.map((r) => `${r.from}-${r.to}`).join(', ')}: ${rules.length === 1 ? 'a rule' : 'rules'} written over several lines, each but the last ending in \`\\\` (a shell's line continuation, as typed, not as iptables-save prints): read as one rule${rules.length === 1 ? '' : ' each'}`;
