// Shell completion: `kdebug completion bash|zsh|fish` prints a script that asks
// `kdebug __complete WORDS...` for candidates, as cobra-based kubectl plugins do (its last line
// is ":4", cobra's "no file completion", so `kubectl_complete-kdebug` answers kubectl too).
import type { Command } from 'commander';
import { readSnapshot } from './cluster/snapshot/read.js';
import { clusterView } from './core/kube/objects.js';
import { quote, valid } from './core/findings/next-command.js';

const SCRIPTS: Record<string, string> = {
  // each answer line becomes one candidate as it is: no compgen -W, nothing in it is expanded;
  // cobra's ":0" asks for the shell's own file names (--snapshot, --file, --kubeconfig). A value
  // after = is answered alone, as cobra answers it: each script puts the flag back its own way
  bash: `# kdebug completion for bash: source <(kdebug completion bash)
_kdebug() {
  local line files= word flag keep cur=\${COMP_WORDS[COMP_CWORD]} rest=\${COMP_LINE:0:COMP_POINT}
  local -a words=() found=()
  local i n=-1
  COMPREPLY=()
  # bash cuts words at = : and @ (COMP_WORDBREAKS): joined again where no space parts them
  for ((i = 0; i <= COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if ((n < 0)) || [[ $rest == [[:space:]]* ]]; then n=$((n + 1)); words[n]=; fi
    rest=\${rest#"\${rest%%[![:space:]]*}"}
    words[n]+=$word
    rest=\${rest#"$word"}
  done
  word=\${words[n]}
  flag=
  [[ $word == -*=* ]] && flag=\${word%%=*}=
  while IFS= read -r line; do
    case $line in :0) files=1 ;; :*) ;; *) found+=("$flag$line") ;; esac
  done < <(kdebug __complete "\${words[@]:1}" 2>/dev/null)
  if [ -n "$files" ]; then
    compopt -o filenames 2>/dev/null
    while IFS= read -r line; do found+=("$flag$line"); done < <(compgen -f -- "\${word#"$flag"}")
  fi
  # readline replaces only the text after the last break (an @ it keeps): the rest stays
  case $cur in *[!=:@]*) keep=\${word%"$cur"} ;; *) keep=$word ;; esac
  keep=\${keep%@}
  for line in "\${found[@]}"; do COMPREPLY+=("\${line#"$keep"}"); done
}
complete -F _kdebug kdebug
`,
  zsh: `# kdebug completion for zsh: source <(kdebug completion zsh)
_kdebug() {
  local -a out words_
  out=("\${(@f)$(kdebug __complete "\${words[@]:1:$((CURRENT-1))}" 2>/dev/null)}")
  words_=("\${(@)out:#:*}")
  if [[ $PREFIX == -*=* ]]; then compset -P 1 '*='; fi
  compadd -- $words_
  if (( \${out[(Ie):0]} )); then _files; fi
}
compdef _kdebug kdebug
`,
  fish: `# kdebug completion for fish: kdebug completion fish | source
function __kdebug_complete
  set -l token (commandline -ct)
  set -l flag (string match -r -- '^-[^=]*=' $token)
  set -l out (kdebug __complete (commandline -opc)[2..-1] $token 2>/dev/null)
  string match -v -- ':*' $out | string replace -r -- '^' "$flag"
  if contains -- ':0' $out
    __fish_complete_path (string replace -r -- '^-[^=]*=' '' $token) | string replace -r -- '^' "$flag"
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

/** Candidates for the last word of `words` (the words after `kdebug`, the last one partial). */
export async function complete(program: Command, words: string[]): Promise<Completion> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const options = (c?: Command) => [...(c?.options ?? []), ...program.options];
  // a command by its name or one of its aliases (service, services: svc)
  const named = (c: Command, w: string) => c.name() === w || c.aliases().includes(w);
  const takesValue = (c?: Command) =>
    new Map(
      options(c)
        .filter((o) => o.required || o.optional)
        .flatMap((o) => [o.short, o.long].flatMap((f) => (f ? [[f, o] as const] : []))),
    );
  // the command: the first word that is no flag nor a global flag's value (-n demo rules: rules)
  const globals = takesValue();
  const first = before.find((w, i) => !w.startsWith('-') && !globals.has(before[i - 1] ?? ''));
  // a flag's value: the words its command's option accepts (commander's choices), one home
  const valued = takesValue(program.commands.find((c) => first !== undefined && named(c, first)));
  // a value after = (--namespace=kube, -n=kube) is completed as after the flag, as cobra does:
  // the candidates are values, each shell's script puts the flag back before them
  const eq = /^(-[^=]+)=(.*)$/s.exec(current);
  const previous = before.at(-1) ?? '';
  const flag = eq && valued.has(eq[1]!) ? eq[1]! : valued.has(previous) ? previous : undefined;
  const partial = eq && flag === eq[1] ? eq[2]! : current;
  if (flag !== undefined) {
    if (FILES.has(flag)) return { candidates: [], files: true };
    const asked = valued.get(flag)?.argChoices ?? FLAG_NAMES[flag];
    return { candidates: asked ? await names(asked, before, partial) : [] };
  }
  // the words that are not flags or their values: the command, then its arguments
  const positional = before.filter(
    (w, i) => !w.startsWith('-') && !valued.has(before[i - 1] ?? ''),
  );
  const command = program.commands.find((c) => named(c, positional[0] ?? ''));
  if (current.startsWith('-'))
    return {
      candidates: options(command)
        .flatMap((o) => [o.short, o.long].filter((f): f is string => !!f))
        .filter((f) => f.startsWith(current)),
    };
  if (!command)
    return {
      candidates: program.commands.map((c) => c.name()).filter((n) => n.startsWith(current)),
    };
  const asked = positional.length === 1 ? ARGUMENTS[command.name()] : undefined;
  return { candidates: asked ? await names(asked, before, current) : [] };
}

/** Flags whose value names something kdebug can look up. */
const FLAG_NAMES: Record<string, Asked> = {
  '--context': 'contexts',
  '--node': 'nodes',
  '-n': 'namespaces',
  '--namespace': 'namespaces',
  '--from': 'clients',
};

/** What a command's first argument names. */
const ARGUMENTS: Record<string, Asked> = {
  svc: 'services',
  demo: 'scenarios',
  completion: 'shells',
};

/** What a name under the cursor is: one kdebug looks up, or one of a fixed few. */
type Asked =
  | 'services'
  | 'nodes'
  | 'pods'
  | 'namespaces'
  | 'contexts'
  | 'scenarios'
  | 'shells'
  | 'clients'
  | readonly string[];

/** --from's kinds as completion offers them (svc.ts takes po/, pods/, no/, nodes/ too). */
const CLIENT_KINDS = { 'pod/': 'pods', 'node/': 'nodes' } as const;

async function names(asked: Asked, before: string[], current: string): Promise<string[]> {
  const starting = (all: string[]) => all.filter((n) => n.startsWith(current));
  if (typeof asked !== 'string') return starting([...asked]);
  if (asked === 'shells') return starting(Object.keys(SCRIPTS));
  // --from KIND/NAME: the kinds, then the Pods (of -n's namespace) or the nodes by name
  if (asked === 'clients') {
    const kind = Object.keys(CLIENT_KINDS).find((k) => current.startsWith(k));
    if (kind === undefined) return starting(Object.keys(CLIENT_KINDS));
    const of = await names(CLIENT_KINDS[kind as keyof typeof CLIENT_KINDS], before, '');
    return starting(of.map((n) => `${kind}${n}`));
  }
  if (asked === 'scenarios')
    return starting((await import('./commands/demo.js')).scenarios().map((s) => s.name));
  if (asked === 'contexts') {
    const { kubeconfigContexts } = await import('./cluster/kube/kubeconfig.js');
    const kubeconfig = flagValue(before, '--kubeconfig');
    const contexts = await kubeconfigContexts(kubeconfig ? { kubeconfig } : {}).catch(() => []);
    // a context is any string a kubeconfig holds: offered only where the shell reads it back as
    // itself ("admin@prod", an EKS ARN), since readline puts a candidate on the line unquoted
    return starting(contexts.filter((c) => quote(c) === c));
  }
  // svc -A: the Services of every namespace, each NS/NAME; svc NS/NAME (as kubectl takes it):
  // the Services of that namespace
  const every = asked === 'services' && before.some((w) => w === '-A' || w === '--all-namespaces');
  const slash = asked === 'services' && !every ? current.indexOf('/') : -1;
  const inNamespace = slash > 0 ? current.slice(0, slash) : undefined;
  const namespace = inNamespace ?? flagValue(before, '-n', '--namespace');
  const looked: Looked = every ? 'every Service' : asked;
  const snapshot = flagValue(before, '--snapshot');
  try {
    const found = snapshot
      ? await snapshotNames(snapshot, namespace, looked)
      : await liveNames(before, namespace, looked);
    // a name from a snapshot or a cluster is shown only if it is one Kubernetes could have made
    return starting(
      found
        .filter((n) => valid.name(n.name) !== undefined)
        .filter((n) => !every || valid.namespace(n.namespace) !== undefined)
        .map((n) =>
          every ? `${n.namespace}/${n.name}` : inNamespace ? `${inNamespace}/${n.name}` : n.name,
        ),
    );
  } catch {
    return []; // no cluster, no access: nothing to offer
  }
}

/** What is looked up in a snapshot or a cluster (every Service: svc -A). */
type Looked = 'services' | 'nodes' | 'pods' | 'namespaces' | 'every Service';

/** A flag's value as pflag reads it (`--flag value`, `--flag=value`, `-n=value`, `-nvalue`), the
 * last one given winning. */
function flagValue(words: string[], ...flags: string[]): string | undefined {
  let value: string | undefined;
  words.forEach((w, i) => {
    for (const f of flags) {
      if (w === f) value = words[i + 1];
      else if (w.startsWith(`${f}=`)) value = w.slice(f.length + 1);
      else if (!f.startsWith('--') && !w.startsWith('--') && w.startsWith(f))
        value = w.slice(f.length);
    }
  });
  return value;
}

interface Named {
  namespace: string;
  name: string;
}

async function snapshotNames(
  dir: string,
  namespace: string | undefined,
  asked: Looked,
): Promise<Named[]> {
  const facts = await readSnapshot(dir, true);
  const view = clusterView(facts.objects);
  const bare = (name: string) => ({ namespace: '', name });
  if (asked === 'nodes') return view.nodes.map((n) => bare(n.name));
  const ns = namespace ?? facts.meta.namespace ?? 'default';
  if (asked === 'pods') return view.pods.filter((p) => p.namespace === ns);
  if (asked === 'namespaces')
    return [...new Set(facts.objects.flatMap((o) => o.metadata?.namespace ?? []))].sort().map(bare);
  return view.services.filter((s) => asked === 'every Service' || s.namespace === ns);
}

async function liveNames(
  words: string[],
  namespace: string | undefined,
  asked: Looked,
): Promise<Named[]> {
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
        : asked === 'pods'
          ? `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`
          : asked === 'namespaces'
            ? '/api/v1/namespaces'
            : asked === 'every Service'
              ? '/api/v1/services'
              : `/api/v1/namespaces/${encodeURIComponent(ns)}/services`;
    return (await api.list(path)).items
      .map((o) => ({ namespace: o.metadata?.namespace ?? '', name: o.metadata?.name ?? '' }))
      .filter((n) => n.name);
  } finally {
    api.close();
  }
}
