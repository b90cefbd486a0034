// pods/exec for the fake API server, run in the lab: the Pod's node names the lab namespace the
// command runs in, so kdebug's kube-proxy-Pod and debug-Pod transports meet real iptables, real
// sockets and real tools. What differs from a real node, and why:
// - The debug Pod reads rules with `chroot /host <binary>`. The lab's nodes are network
//   namespaces that share this machine's filesystem: the node's `/` already is `/`, and there is
//   no /host to enter (making one would mean bind-mounting / on the host). So `chroot /host` is
//   dropped and the same binary runs in the node's namespace: the same program, the same kernel
//   tables, the same output.
// - In the kube-proxy Pod, `iptables-save` is the image's iptables wrapper, which picks the
//   backend kube-proxy writes to: here, the backend the lab loaded that node's rules into.
import { spawn } from 'node:child_process';
import type { ExecHandler } from '../fake-api/exec.js';
import type { Lab } from './lab.js';

export interface LabExecOptions {
  /** Nodes whose kubelet does not answer: exec there fails as the API server says it then. */
  unreachable?: string[];
  /** Called with each exec before it runs (tests wait on it, or stall it). */
  onExec?: (node: string, command: string[]) => void | Promise<void>;
}

/** Argv with `chroot /host` removed (see the top of this file). */
export function withoutChroot(argv: string[]): string[] {
  const at = argv.findIndex((a, i) => a === 'chroot' && argv[i + 1] === '/host');
  return at < 0 ? argv : [...argv.slice(0, at), ...argv.slice(at + 2)];
}

export function labExec(lab: Lab, o: LabExecOptions = {}): ExecHandler {
  return async (req) => {
    const nodeName = (req.pod['spec'] as { nodeName?: string } | undefined)?.nodeName ?? '';
    const node = lab.node(nodeName);
    if (o.unreachable?.includes(nodeName))
      throw new Error(
        `error dialing backend: dial tcp ${node.ip}:10250: connect: no route to host`,
      );
    await o.onExec?.(nodeName, req.command);
    let argv = withoutChroot(req.command);
    if (req.container === 'kube-proxy' && /^ip6?tables-save$/.test(argv[0] ?? ''))
      argv = [argv[0]!.replace('-save', `-${node.backend}-save`), ...argv.slice(1)];
    return spawn('ip', ['netns', 'exec', lab.ns(nodeName), ...argv], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  };
}
