// The command-line flags that say how to reach nodes (--via, --image, --yes, --debug-namespace,
// --node-timeout, --max-output-mib and the SSH flags), turned into transport options. Bad values
// are refused with a message naming the flag.
import type { DebugPodConsent } from './debug-pod.js';
import type { SshAddressType } from './ssh.js';
import type { NodeAccessOptions, Via } from './transport.js';
import { sshOptionsFromFlags, type SshFlags } from '../ssh/route.js';

export interface NodeAccessFlags extends SshFlags {
  via?: Via;
  image?: string;
  yes?: boolean;
  debugNamespace?: string;
  /** Seconds, as typed. */
  nodeTimeout?: string;
  sshAddressType?: SshAddressType;
}

export class NodeFlagsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeFlagsError';
  }
}

// an image reference: [registry/]path[:tag][@digest], nothing a shell or YAML could misread
const IMAGE = /^[a-z0-9][a-z0-9._\-/:]*(@sha256:[a-f0-9]{64})?$/i;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Transport options from the flags and the environment the CLI read (SSH_AUTH_SOCK). */
export function nodeAccessOptions(
  f: NodeAccessFlags,
  env: Record<string, string | undefined>,
  confirm?: (q: DebugPodConsent) => Promise<boolean>,
): NodeAccessOptions {
  const seconds = f.nodeTimeout === undefined ? undefined : Number(f.nodeTimeout);
  if (seconds !== undefined && !(seconds > 0 && seconds <= 3600))
    throw new NodeFlagsError(`--node-timeout ${f.nodeTimeout}: give seconds between 0 and 3600`);
  if (f.image !== undefined && !IMAGE.test(f.image))
    throw new NodeFlagsError(`--image ${JSON.stringify(f.image)} is not an image reference`);
  if (f.debugNamespace !== undefined && !NAMESPACE.test(f.debugNamespace))
    throw new NodeFlagsError(`--debug-namespace ${f.debugNamespace} is not a namespace name`);
  let ssh;
  try {
    ssh = sshOptionsFromFlags(f, env);
  } catch (e) {
    throw new NodeFlagsError((e as Error).message);
  }
  return {
    via: f.via ?? 'auto',
    ...(seconds !== undefined ? { timeoutMs: seconds * 1000 } : {}),
    // read with the SSH flags (`rules --ssh` needs it there); every way is capped the same
    ...(ssh.maxOutputBytes !== undefined ? { maxOutputBytes: ssh.maxOutputBytes } : {}),
    ssh: { ...ssh, ...(f.sshAddressType ? { addressType: f.sshAddressType } : {}) },
    pod: {
      ...(f.debugNamespace ? { namespace: f.debugNamespace } : {}),
      ...(f.image ? { image: f.image } : {}),
      yes: f.yes === true,
      ...(confirm ? { confirm } : {}),
    },
  };
}
