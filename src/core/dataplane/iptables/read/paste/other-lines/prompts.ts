// Shell prompts and the commands typed after them, and output a page ran on from a prompt or a
// command on the same line.

/** A shell prompt before a command: user@host, [user@host dir], host #, $ or %. */
export const PROMPT = /^(?:\S*[@:]\S*\s*[$#%] |\[[^\]]*\][$#] |\S+ [$#] |[$%] )/;
/** A command that lists rules or a dataplane's tables, where a prompt's "#" is glued to it. */
export const LISTING =
  /^(?:sudo )?(?:ip6?tables(?:-legacy|-nft)?(?:-save)?|nft|ipvsadm|ipset|cilium(?:-dbg)?)(?: |$)/;
/** The commands people type around a paste of rules. */
export const COMMANDS =
  /^(?:sudo|kubectl|k|iptables\S*|ip6tables\S*|nft|ipvsadm|ipset|grep|egrep|cat|less|docker|crictl|ssh|minikube|kind|k3s|oc|journalctl|conntrack)(?: |$)/;

/** Where a prompt ("# cat ...") runs on right after a rule's last word, outside quotes (a page
 * that lost the line end between a command's output and the next command); -1 where none. */
export function gluedPrompt(line: string): number {
  for (const m of line.matchAll(/\S(# )/g)) {
    const at = m.index + 1;
    const quotes = line.slice(0, at).split('"').length - 1;
    if (quotes % 2 === 0 && COMMANDS.test(line.slice(at + 2))) return at;
  }
  return -1;
}

/** Where a dump line runs on from the last word of a command typed at a prompt on this line
 * (`# cat rules.txt|grep KUBE-SVC-X-A KUBE-SVC-X ...`, a page that lost the line end between a
 * command and its output), after any elision glued before the prompt; undefined where the line
 * holds none, or its command prints no rules (`iptables -t nat-A X` is a command mistyped). */
export function gluedOutput(
  line: string,
): { at: number; command: string; elided: boolean } | undefined {
  const elided = /^(?:\.\.\.|…)/.exec(line)?.[0].length ?? 0;
  const rest = line.slice(elided);
  const prompt =
    PROMPT.exec(rest)?.[0].length ??
    (rest.startsWith('# ') && COMMANDS.test(rest.slice(2)) ? 2 : -1);
  if (prompt < 0) return undefined;
  const from = elided + prompt;
  let quote: string | undefined;
  for (let k = from; k < line.length; k++) {
    const c = line[k]!;
    // output runs on with no blank before it: a command's own -A (`iptables -A X`) has one
    if (quote === undefined && k > from && /\S/.test(line[k - 1]!) && GLUED.test(line.slice(k)))
      return PRINTS_RULES.test(line.slice(from, k))
        ? { at: k, command: line.slice(elided, k), elided: elided > 0 }
        : undefined;
    if (c === quote) quote = undefined;
    else if (quote === undefined && (c === '"' || c === "'")) quote = c;
  }
  return undefined;
}

/** The start of a line of iptables-save or -S output. */
const GLUED =
  /^(?:-A [\w-]+ |-[NP] [\w-]+(?: \w+)?$|:[\w-]+ \S+ \[\d+:\d+\]$|\*(?:nat|filter|mangle|raw|security)$)/;
/** A command whose output is rules in that form: a save, `iptables -S`, or a file's lines. */
const PRINTS_RULES =
  /ip6?tables(?:-legacy|-nft)?-save|ip6?tables\S*(?: [^|;&]*)? (?:-[a-zA-Z]*S[a-zA-Z]*|--list-rules)(?: |$)|(?:^|[\s|;&(])(?:cat|zcat|grep|egrep|fgrep|head|tail|less|more)(?: |$)/;
