// `kdebug rules --ssh [USER@]HOST[:PORT]`: a host's rules read straight over SSH, with no cluster
// at all (a kubeadm node whose API server is down). When the default iptables-save shows no
// kube-proxy chain, the other backend (legacy or nft) is read too.
import type { NodeCommand } from '../cluster.js';
import { commandStem } from '../cluster.js';
import { hasKubeChains } from '../../core/dataplane/iptables/backend.js';
import { SshSession } from '../nodes/ssh.js';
import { SshError, type SshOptions } from './route.js';

export { SshError, sshOptionsFromFlags, type SshFlags } from './route.js';

export interface SshRules {
  /** The whole iptables-save output (every table) of the backend that holds kube-proxy's chains. */
  text: string;
  /** The snapshot stem of the command that produced it, e.g. "iptables-save", "iptables-legacy-save". */
  stem: string;
  /** "ssh root@192.0.2.11" */
  via: string;
  /** What a person should know about how the rules were found. */
  notes: string[];
}

/** Connects, reads the rules and disconnects. Throws SshError with a message to show as is. */
export async function readRulesOverSsh(
  destination: string,
  opts: SshOptions = {},
): Promise<SshRules> {
  const session = await SshSession.open(destination, opts);
  try {
    const read = async (command: NodeCommand) => {
      const r = await session.run(command);
      return { ...r, stem: commandStem(command) };
    };
    const first = await read({ kind: 'iptables-save', backend: 'auto' });
    if (first.exitCode !== 0) {
      const why = first.error ?? (first.stderr.trim() || `exit ${first.exitCode}`);
      throw new SshError('other', `${session.via}: iptables-save failed: ${why}`);
    }
    if (hasKubeChains(first.stdout))
      return { text: first.stdout, stem: first.stem, via: session.via, notes: [] };
    for (const backend of ['legacy', 'nft'] as const) {
      const other = await read({ kind: 'iptables-save', backend });
      if (other.exitCode === 0 && hasKubeChains(other.stdout)) {
        const note = `iptables-save shows no kube-proxy chains on this host; they are in the ${backend} backend (${other.stem})`;
        return { text: other.stdout, stem: other.stem, via: session.via, notes: [note] };
      }
    }
    return {
      text: first.stdout,
      stem: first.stem,
      via: session.via,
      notes: [
        'no kube-proxy chain in any iptables backend on this host (kube-proxy in ipvs or nftables mode, or not running?)',
      ],
    };
  } finally {
    await session.close();
  }
}
