// What kdebug adds to client-node's KubeConfig: a handle on the exec credential plugins it
// spawns, and one TLS context and one agent that every connection shares.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import https from 'node:https';
import tls from 'node:tls';
import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * client-node spawns exec credential plugins and keeps no handle; give its ExecAuth a spawn that
 * records them, so a deadline or close() can stop one that hangs. (Pinned to client-node ~1.4.)
 */
export function trackPlugins(kc: KubeConfig, running: Set<ChildProcess>): void {
  const authenticators =
    (kc as unknown as { authenticators?: { execFn?: typeof spawn }[] }).authenticators ?? [];
  const execAuth = authenticators.find((a) => typeof a.execFn === 'function');
  if (!execAuth) return;
  execAuth.execFn = ((command: string, args: string[], options: SpawnOptions) => {
    const child = spawn(command, args, options);
    running.add(child);
    child.on('exit', () => running.delete(child));
    return child;
  }) as typeof spawn;
}

/** Every connection, requests' and execs' alike (client-node's Exec asks the KubeConfig too),
 * takes one TLS context while the credentials stay the same: building one parses the key and
 * every CA again, tens of milliseconds of CPU per exec on a large run. And one agent while
 * client-node would make another of the very same options: its TLS sessions resume, where a new
 * agent a connection made each one a full handshake (a thousand execs of --all-nodes). */
export function shareTlsContext(kc: KubeConfig): void {
  const apply = kc.applyToHTTPSOptions.bind(kc);
  let shared: { of: string; context: tls.SecureContext } | undefined;
  let agent: https.Agent | undefined;
  kc.applyToHTTPSOptions = async (opts) => {
    await apply(opts);
    const o = opts as tls.SecureContextOptions & {
      secureContext?: tls.SecureContext;
      agent?: unknown;
    };
    const { ca, cert, key, pfx, passphrase } = o;
    // a credential plugin may hand out a new certificate: a new context then
    const of = JSON.stringify([ca, cert, key, pfx, passphrase]);
    if (shared?.of !== of)
      shared = { of, context: tls.createSecureContext({ ca, cert, key, pfx, passphrase }) };
    o.secureContext = shared.context;
    // a plain HTTPS agent only (a proxy's is left as made), and only one that would connect
    // exactly as the new one: the same CA, client certificate, server name and verification
    const made = o.agent;
    if (!(made instanceof https.Agent) || made.constructor !== https.Agent) return;
    if (agent && isDeepStrictEqual(agent.options, made.options)) o.agent = agent;
    else agent = made;
  };
}
