// Shell completion: `kdebug completion bash|zsh|fish` prints a script that asks
// `kdebug __complete WORDS...` for candidates, as cobra-based kubectl plugins do (its last line
// is ":4", cobra's "no file completion", so `kubectl_complete-kdebug` answers kubectl too).
import type { Command } from 'commander';
import { readSnapshot } from './cluster/snapshot.js';
import { clusterView } from './core/kube/objects.js';
import { valid } from './core/next-command.js';

const SCRIPTS: Record<string, string> = {
  // each answer line becomes one candidate as it is: no compgen -W, nothing in it is expanded;
  // cobra's ":0" asks for the shell's own file names (--snapshot, --file, --kubeconfig)
  bash: `# kdebug completion for bash: source <(kdebug completion bash)
_kdebug() {
  local line files=
  COMPREPLY=()
  while IFS= read -r line; do
    case $line in :0) files=1 ;; :*) ;; *) COMPREPLY+=("$line") ;; esac
  done < <(kdebug __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  if [ -n "$files" ]; then
    compopt -o filenames 2>/dev/null
    mapfile -t -O "\${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "\${COMP_WORDS[COMP_CWORD]}")
  fi
}
complete -F _kdebug kdebug
`,
  zsh: `# kdebug completion for zsh: source <(kdebug completion zsh)
_kdebug() {
  local -a out words_
  out=("\${(@f)$(kdebug __complete "\${words[@]:1:$((CURRENT-1))}" 2>/dev/null)}")
  words_=("\${(@)out:#:*}")
  compadd -- $words_
  if (( \${out[(Ie):0]} )); then _files; fi
}
compdef _kdebug kdebug
`,
  fish: `# kdebug completion for fish: kdebug completion fish | source
function __kdebug_complete
  set -l out (kdebug __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)
  string match -v -- ':*' $out
  if contains -- ':0' $out
    __fish_complete_path (commandline -ct)
  end
end
complete -c kdebug -f -a '(__kdebug_complete)'
`,
};

export function completionScript(shell: string): string | undefined {
  return SCRIPTS[shell];
}

/** Flags whose value is a file or directory: the shell completes those itself. */
const FILES = new Set(['--snapshot', '--file', '--kubeconfig']);

/** What to offer: names, and whether the shell should offer file names too. */
export interface Completion {
  candidates: string[];
  files?: true;
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
export async function complete(program: Command, words: string[]): Promise<Completion> {
  const previous = words.at(-2);
  if (previous && FILES.has(previous)) return { candidates: [], files: true };
  return { candidates: await names(program, words) };
}

async function names(program: Command, words: string[]): Promise<string[]> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const options = (c?: Command) => [...(c?.options ?? []), ...program.options];
  // a command by its name or one of its aliases (service, services: svc)
  const named = (c: Command, w: string) => c.name() === w || c.aliases().includes(w);
  const valued = new Set(
    options(program.commands.find((c) => before.some((w) => named(c, w))))
      .filter((o) => o.required || o.optional)
      .flatMap((o) => [o.short, o.long].filter((f): f is string => !!f)),
  );
  // the words that are not flags or their values: the command, then its arguments
  const positional = before.filter(
    (w, i) => !w.startsWith('-') && !valued.has(before[i - 1] ?? ''),
  );
  const command = program.commands.find((c) => named(c, positional[0] ?? ''));
  const flags = options(command).flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
  const previous = before.at(-1);
  if (previous && VALUES[previous]) return VALUES[previous]!.filter((v) => v.startsWith(current));
  if (current.startsWith('-')) return flags.filter((f) => f.startsWith(current));
  if (!command) return program.commands.map((c) => c.name()).filter((n) => n.startsWith(current));
  if (previous === '--context') {
    const { kubeconfigContexts } = await import('./cluster/kube/kubeconfig.js');
    const kubeconfig = flagValue(before, '--kubeconfig');
    const contexts = await kubeconfigContexts(kubeconfig ? { kubeconfig } : {}).catch(() => []);
    // a context is the user's own name ("admin@prod", an EKS ARN): printable and one word
    return contexts.filter((c) => /^[!-~]+$/.test(c) && c.startsWith(current));
  }
  const asked: Asked | undefined =
    previous === '--node'
      ? 'nodes'
      : previous === '-n' || previous === '--namespace'
        ? 'namespaces'
        : command.name() === 'svc' && positional.length === 1
          ? 'services'
          : undefined;
  if (!asked) return [];
  // svc NS/NAME, as kubectl takes it: the Services of that namespace, each written NS/NAME
  const slash = asked === 'services' ? current.indexOf('/') : -1;
  const inNamespace = slash > 0 ? current.slice(0, slash) : undefined;
  const namespace = inNamespace ?? flagValue(before, '-n', '--namespace');
  const snapshot = flagValue(before, '--snapshot');
  try {
    const found = snapshot
      ? await snapshotNames(snapshot, namespace, asked)
      : await liveNames(before, namespace, asked);
    // a name from a snapshot or a cluster is shown only if it is one Kubernetes could have made
    return found
      .filter((n) => valid.name(n) !== undefined)
      .map((n) => (inNamespace ? `${inNamespace}/${n}` : n))
      .filter((n) => n.startsWith(current));
  } catch {
    return []; // no cluster, no access: nothing to offer
  }
}

/** What a name under the cursor is. */
type Asked = 'services' | 'nodes' | 'namespaces';

function flagValue(words: string[], ...names: string[]): string | undefined {
  const at = words.findIndex((w) => names.includes(w));
  return at >= 0 ? words[at + 1] : undefined;
}

async function snapshotNames(dir: string, namespace: string | undefined, asked: Asked) {
  const facts = await readSnapshot(dir);
  const view = clusterView(facts.objects);
  if (asked === 'nodes') return view.nodes.map((n) => n.name);
  if (asked === 'namespaces')
    return [...new Set(facts.objects.flatMap((o) => o.metadata?.namespace ?? []))].sort();
  const ns = namespace ?? facts.meta.namespace ?? 'default';
  return view.services.filter((s) => s.namespace === ns).map((s) => s.name);
}

async function liveNames(words: string[], namespace: string | undefined, asked: Asked) {
  const { KubeApi } = await import('./cluster/kube-api.js');
  const api = await KubeApi.connect({
    context: flagValue(words, '--context'),
    kubeconfig: flagValue(words, '--kubeconfig'),
    timeoutMs: 3000, // a shell waits for this: never long
  });
  try {
    const ns = namespace ?? api.namespace;
    const path =
      asked === 'nodes'
        ? '/api/v1/nodes'
        : asked === 'namespaces'
          ? '/api/v1/namespaces'
          : `/api/v1/namespaces/${encodeURIComponent(ns)}/services`;
    return (await api.list(path)).items.map((o) => o.metadata?.name ?? '').filter(Boolean);
  } finally {
    api.close();
  }
}
