// Whose listing a typed command printed: the pod `kubectl exec` ran it in (with its namespace and
// context), the container `docker|crictl|podman exec` did, the host `ssh` did, else the host a
// prompt names (`root@node-a:~#`, `[root@node-a ~]#`). Two listings are one agent's or one
// node's only where their targets match, or neither line names one.

/** Options of ssh that take a value (`ssh -p 2222 -i key HOST`). */
const SSH_VALUED = new Set('bcDEeFIiJLlmOopQRSWw'.split(''));
/** Options of kubectl that take a value, long and short. */
const KUBECTL_VALUED = new Set([
  '-n',
  '--namespace',
  '-c',
  '--container',
  '--context',
  '--kubeconfig',
  '--cluster',
  '--user',
  '-s',
  '--server',
  '--pod-running-timeout',
  '--request-timeout',
]);
/** Options of docker/crictl/podman exec that take a value. */
const EXEC_VALUED = new Set(['-u', '--user', '-e', '--env', '-w', '--workdir', '--env-file']);

/** The words of a command line, quotes taken off. */
const words = (s: string) =>
  (s.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^(["'])(.*)\1$/, '$2'));

/** The first word from `from` on that is not an option (nor an option's value). */
function operand(
  ws: string[],
  from: number,
  valued: (w: string) => boolean,
): { word: string; at: number } | undefined {
  for (let i = from; i < ws.length; i++) {
    const w = ws[i]!;
    if (w === '--') return undefined;
    if (!w.startsWith('-')) return { word: w, at: i };
    if (!w.includes('=') && valued(w)) i++;
  }
  return undefined;
}

/** The value of a kubectl option (`-n NS`, `--namespace=NS`, `-nNS`) in `ws`, if given. */
function option(ws: string[], names: string[]): string | undefined {
  for (let i = 0; i < ws.length && ws[i] !== '--'; i++) {
    const w = ws[i]!;
    for (const n of names) {
      if (w === n) return ws[i + 1];
      if (w.startsWith(`${n}=`)) return w.slice(n.length + 1);
      if (n.length === 2 && w.startsWith(n) && w.length > 2 && !n.startsWith('--'))
        return w.slice(2);
    }
  }
  return undefined;
}

/** The target a typed line names (see above), or undefined where it names none. */
export function commandTarget(line: string): string | undefined {
  const ws = words(line);
  // kubectl (or oc) exec POD: the pod, with the namespace and context the line gives
  const kube = ws.findIndex((w) => /(?:^|\/)(?:kubectl|oc|k)$/.test(w));
  const exec = kube < 0 ? -1 : ws.indexOf('exec', kube + 1);
  if (exec > 0) {
    const pod = operand(ws, exec + 1, (w) => KUBECTL_VALUED.has(w))?.word;
    if (pod) {
      const kubeWords = ws.slice(kube);
      const ns = option(kubeWords, ['-n', '--namespace']);
      const ctx = option(kubeWords, ['--context']);
      return `pod ${ctx ? `${ctx}/` : ''}${ns ? `${ns}/` : ''}${pod}`;
    }
  }
  const container = ws.findIndex(
    (w, i) => /(?:^|\/)(?:docker|crictl|podman|nerdctl)$/.test(w) && ws[i + 1] === 'exec',
  );
  if (container >= 0) {
    const c = operand(ws, container + 2, (w) => EXEC_VALUED.has(w))?.word;
    if (c) return `container ${c}`;
  }
  const ssh = ws.findIndex((w) => /(?:^|\/)ssh$/.test(w));
  if (ssh >= 0) {
    const host = operand(ws, ssh + 1, (w) => /^-[^-]$/.test(w) && SSH_VALUED.has(w[1]!))?.word;
    if (host) return `host ${host.replace(/^[^@]*@/, '')}`;
  }
  const prompt = /^\s*\[?[\w.-]+@([\w.-]+)(?::|\s)[^\n]*?[#$%>]\s/.exec(line);
  return prompt ? `host ${prompt[1]}` : undefined;
}

/** Whether listings printed by commands with these targets may be read as one agent's or node's:
 * their targets match, or neither command names one. */
export const sameTarget = (a: string | undefined, b: string | undefined) => a === b;

/** A target as said to a person: "pod kube-system/cilium-aaaaa", "host node-a". */
export const saidTarget = (t: string | undefined) => t ?? 'no pod or host named';
