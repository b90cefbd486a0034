// Other tools' output a node's listing may be pasted with, as every reader of a paste (iptables',
// ipvsadm's, nft's, Cilium's) knows it: the shell's report that nft crashed, and kubectl's output
// (the API server's objects, never the node's rules).
import { classifyLine } from '../iptables/read/paste/other-lines/classify.js';
import { isKubectl, type KubectlKind } from '../iptables/read/paste/other-lines/foreign-kinds.js';

/** The shell's report of a command killed by a signal, with the command where bash (`PID
 * Segmentation fault (core dumped) COMMAND`) or zsh (`zsh: segmentation fault  COMMAND`) names it. */
const SHELL_CRASH =
  /^(?:(?:-?bash|sh|zsh): (?:line \d+: )?)?(?:\d+ )?(?:segmentation fault|aborted|bus error|illegal (?:instruction|hardware instruction)|floating point exception)(?: \(core dumped\))?(?:\s+(.+))?$/i;

/** Whether a line is the shell's report that nft crashed: nft named on it, or typed just above. */
export function nftCrashed(line: string, typedAbove: string | undefined): boolean {
  const m = SHELL_CRASH.exec(line);
  return m !== null && NFT_COMMAND.test(m[1] ?? typedAbove ?? '');
}

/** A command line that runs nft (after sudo, a prompt, `kubectl exec ... --`). */
const NFT_COMMAND = /(?:^|[\s$#>(/])nft(?= |$)/;

/** Which of the `skipped` lines (1-based) are kubectl's output: a header of its printers (`get
 * ep`, `get endpointslices`, `get svc` ...) and the rows right below it, up to a blank line or a
 * line of another kind. The API server's objects, not a node's rules: named, never prose. */
export function kubectlLines(lines: readonly string[], skipped: readonly number[]): number[] {
  const out: number[] = [];
  const skip = new Set(skipped);
  let rows = false; // the line above was kubectl's header or one of its rows
  for (let no = 1; no <= lines.length; no++) {
    const t = lines[no - 1]!.trim();
    const c = t && skip.has(no) ? classifyLine(t) : undefined;
    if (c?.kind === 'foreign' && isKubectl(c.foreign)) rows = true;
    else if (!(rows && c?.kind === 'prose')) rows = false;
    if (rows) out.push(no);
  }
  return out;
}

/** What kubectl printed on `kubectlLines` (1-based), by resource, each once in the order met. */
export function kubectlKinds(lines: readonly string[], kubectl: readonly number[]): KubectlKind[] {
  const kinds = new Set<KubectlKind>();
  for (const no of kubectl) {
    const c = classifyLine(lines[no - 1]!.trim());
    if (c.kind === 'foreign' && isKubectl(c.foreign)) kinds.add(c.foreign);
  }
  return [...kinds];
}
