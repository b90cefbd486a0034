// Shell completion: `kdebug completion bash|zsh|fish` prints a script that asks
// `kdebug __complete WORDS...` for candidates, as cobra-based kubectl plugins do (its last line
// is ":4", cobra's "no file completion", so `kubectl_complete-kdebug` answers kubectl too).
import type { Command } from 'commander';
import { readSnapshot } from './cluster/snapshot.js';
import { clusterView } from './core/kube.js';
import { valid } from './core/next-command.js';

const SCRIPTS: Record<string, string> = {
  // each answer line becomes one candidate as it is: no compgen -W, nothing in it is expanded
  bash: `# kdebug completion for bash: source <(kdebug completion bash)
_kdebug() {
  local line
  COMPREPLY=()
  while IFS= read -r line; do
    case $line in :*) ;; *) COMPREPLY+=("$line") ;; esac
  done < <(kdebug __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -F _kdebug kdebug
`,
  zsh: `# kdebug completion for zsh: source <(kdebug completion zsh)
_kdebug() {
  local -a words_
  words_=("\${(@f)$(kdebug __complete "\${words[@]:1:$((CURRENT-1))}" 2>/dev/null | grep -v '^:')}")
  compadd -- $words_
}
compdef _kdebug kdebug
`,
  fish: `# kdebug completion for fish: kdebug completion fish | source
complete -c kdebug -f -a '(kdebug __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null | string match -v ":*")'
`,
};

export function completionScript(shell: string): string | undefined {
  return SCRIPTS[shell];
}

/** Flags whose next word is a value, and the values kdebug can offer for some. */
const VALUES: Record<string, string[] | undefined> = {
  '-o': ['tui', 'text', 'json'],
  '--output': ['tui', 'text', 'json'],
  '--via': ['auto', 'kube-proxy', 'pod', 'ssh'],
  '--proto': ['tcp', 'udp', 'sctp', 'icmp'],
  '--table': ['nat', 'filter', 'mangle', 'raw', 'security'],
};

/** Candidates for the last word of `words` (the words after `kdebug`, the last one partial). */
export async function complete(program: Command, words: string[]): Promise<string[]> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const options = (c?: Command) => [...(c?.options ?? []), ...program.options];
  const valued = new Set(
    options(program.commands.find((c) => before.includes(c.name())))
      .filter((o) => o.required || o.optional)
      .flatMap((o) => [o.short, o.long].filter((f): f is string => !!f)),
  );
  // the words that are not flags or their values: the command, then its arguments
  const positional = before.filter(
    (w, i) => !w.startsWith('-') && !valued.has(before[i - 1] ?? ''),
  );
  const command = program.commands.find((c) => c.name() === positional[0]);
  const flags = options(command).flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
  const previous = before.at(-1);
  if (previous && VALUES[previous]) return VALUES[previous]!.filter((v) => v.startsWith(current));
  if (current.startsWith('-')) return flags.filter((f) => f.startsWith(current));
  if (!command) return program.commands.map((c) => c.name()).filter((n) => n.startsWith(current));
  const takesName = command.name() === 'svc' && positional.length === 1;
  if (!takesName && previous !== '--node') return [];
  const namespace = flagValue(before, '-n', '--namespace');
  const snapshot = flagValue(before, '--snapshot');
  try {
    const names = snapshot
      ? await snapshotNames(snapshot, namespace, previous === '--node')
      : await liveNames(before, namespace, previous === '--node');
    // a name from a snapshot or a cluster is shown only if it is one Kubernetes could have made
    return names.filter((n) => valid.name(n) !== undefined && n.startsWith(current));
  } catch {
    return []; // no cluster, no access: nothing to offer
  }
}

function flagValue(words: string[], ...names: string[]): string | undefined {
  const at = words.findIndex((w) => names.includes(w));
  return at >= 0 ? words[at + 1] : undefined;
}

async function snapshotNames(dir: string, namespace: string | undefined, nodes: boolean) {
  const facts = await readSnapshot(dir);
  const view = clusterView(facts.objects);
  if (nodes) return view.nodes.map((n) => n.name);
  const ns = namespace ?? facts.meta.namespace ?? 'default';
  return view.services.filter((s) => s.namespace === ns).map((s) => s.name);
}

async function liveNames(words: string[], namespace: string | undefined, nodes: boolean) {
  const { KubeApi } = await import('./cluster/kube-api.js');
  const api = await KubeApi.connect({
    context: flagValue(words, '--context'),
    kubeconfig: flagValue(words, '--kubeconfig'),
    timeoutMs: 3000, // a shell waits for this: never long
  });
  try {
    const ns = namespace ?? api.namespace;
    const path = nodes ? '/api/v1/nodes' : `/api/v1/namespaces/${encodeURIComponent(ns)}/services`;
    return (await api.list(path)).items.map((o) => o.metadata?.name ?? '').filter(Boolean);
  } finally {
    api.close();
  }
}
