// The one small interface between kdebug and the outside world, and the closed list of
// commands kdebug may run on a node. Every command is read-only and has a fixed argv: nothing
// from the cluster is ever spliced into a shell string.
import type { KubeObject, SnapshotMeta } from '../core/model.js';

/** Every command kdebug can run on a node. Adding one means adding it here, nowhere else. */
export type NodeCommand =
  | { kind: 'iptables-save'; backend: 'auto' | 'legacy' | 'nft'; table?: 'nat' | 'filter' }
  | { kind: 'ip6tables-save'; backend: 'auto' | 'legacy' | 'nft'; table?: 'nat' | 'filter' }
  | { kind: 'proxy-mode' }
  | { kind: 'proxy-metrics' }
  | { kind: 'proxy-configz' }
  | { kind: 'ip-addr' }
  | { kind: 'dns-lookup'; name: string; server: string; type: 'A' | 'AAAA' | 'SRV' | 'CNAME' }
  | { kind: 'tcp-connect'; ip: string; port: number }
  | { kind: 'udp-probe'; ip: string; port: number }
  | { kind: 'icmp-echo'; ip: string };

/** The file stem a command's stdout is stored under in a snapshot (`nodes/<node>/<stem>.txt`). */
export function commandStem(c: NodeCommand): string {
  switch (c.kind) {
    case 'iptables-save':
    case 'ip6tables-save': {
      const backend = c.backend === 'auto' ? '' : `-${c.backend}`;
      const base =
        c.kind === 'iptables-save' ? `iptables${backend}-save` : `ip6tables${backend}-save`;
      return c.table ? `${base}-${c.table}` : base;
    }
    case 'proxy-mode':
      return 'proxy-mode';
    case 'proxy-metrics':
      return 'proxy-metrics';
    case 'proxy-configz':
      return 'proxy-configz';
    case 'ip-addr':
      return 'ip-addr';
    case 'dns-lookup':
      return `dns-lookup_${c.type}_${c.name}_${c.server}`;
    case 'tcp-connect':
      return `tcp-connect_${c.ip}_${c.port}`;
    case 'udp-probe':
      return `udp-probe_${c.ip}_${c.port}`;
    case 'icmp-echo':
      return `icmp-echo_${c.ip}`;
  }
}

export interface NodeResult {
  stdout: string;
  stderr: string;
  /** null when the command could not run at all (see `error`). */
  exitCode: number | null;
  error?: string;
  /** Which transport ran it, e.g. "ssh root@192.0.2.10" or "exec kube-system/kube-proxy-abcde". */
  via: string;
}

/** A path under the API server: /api/v1/... for the core group, /apis/GROUP/VERSION/... otherwise. */
export function apiPath(p: {
  group?: string;
  version?: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}): string {
  const base = p.group ? `/apis/${p.group}/${p.version ?? 'v1'}` : `/api/${p.version ?? 'v1'}`;
  const ns = p.namespace ? `/namespaces/${encodeURIComponent(p.namespace)}` : '';
  const name = p.name ? `/${encodeURIComponent(p.name)}` : '';
  return `${base}${ns}/${p.resource}${name}${p.subresource ? `/${p.subresource}` : ''}`;
}

/** A command that could not run at all: no output, and why. */
export const failedResult = (error: string, via: string): NodeResult => ({
  stdout: '',
  stderr: '',
  exitCode: null,
  error,
  via,
});

/** What to read from the API for one target. */
export interface ReadRequest {
  /** A path under the API server, e.g. "/api/v1/namespaces/default/services". */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface Cluster {
  /** Where the objects come from: context and server (snapshot meta.json). */
  readonly meta: SnapshotMeta;
  /**
   * The items of one list request, exactly as the API returned them, with kind and apiVersion
   * filled in from the list (the API leaves them out of items), as `kubectl get -o json` prints.
   */
  list(request: ReadRequest): Promise<KubeObject[]>;
  /** One object (path ends in its name), exactly as the API returned it; undefined when it does not exist. */
  get(path: string): Promise<KubeObject | undefined>;
  /** Runs one command from the closed list on a node. Never throws for a failed command. */
  run(node: string, command: NodeCommand): Promise<NodeResult>;
  /** Releases connections and removes anything kdebug created (debug Pods). */
  close(): Promise<void>;
}
