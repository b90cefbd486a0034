// The frontends a Cilium listing holds, found as drift looks for what it expects: by key, and a
// wildcard NodePort at each node address too.
import type { ExpectedFrontend } from '../expected/expected.js';
import { frontendKey, isWildcard, type CiliumFrontend, type CiliumTable } from '../read/listing.js';

/** Where the actual frontends are, by key; NodePorts also by port alone, for listings that
 * hold one frontend per node address (service list before 1.17, bpf lb list). */
export class Frontends {
  private readonly byKey = new Map<string, CiliumFrontend>();
  private readonly byNodePort = new Map<string, CiliumFrontend[]>();
  readonly protocols: boolean;

  constructor(readonly table: CiliumTable) {
    this.protocols = table.frontends.some((f) => f.protocol !== undefined);
    for (const f of table.frontends) {
      this.byKey.set(this.key(f), f);
      if (f.type === 'NodePort' || f.type === 'HostPort') {
        const k = `${f.ip.includes(':')} ${f.port}/${f.protocol ?? ''} ${f.internal ?? false}`;
        this.byNodePort.set(k, [...(this.byNodePort.get(k) ?? []), f]);
      }
    }
  }

  private key(f: Pick<CiliumFrontend, 'ip' | 'port' | 'protocol' | 'internal'>) {
    return frontendKey({ ...f, protocol: this.protocols ? f.protocol : undefined });
  }

  /** The entries that hold `want`: its own, and for a wildcard every NodePort address's too
   * (the BPF maps and service list before 1.17 hold one per node address). */
  find(want: ExpectedFrontend): CiliumFrontend[] {
    const exact = this.byKey.get(this.key(want));
    if (!isWildcard(want.ip)) return exact ? [exact] : [];
    const protocol = this.protocols ? want.protocol : '';
    const ports =
      this.byNodePort.get(
        `${want.ip.includes(':')} ${want.port}/${protocol} ${want.internal ?? false}`,
      ) ?? [];
    // a listing without scopes holds the internal frontend's backends nowhere: no claim
    return [...new Set([...(exact ? [exact] : []), ...ports])];
  }
}
