// A BPF map entry's behaviour, from Cilium's maps dump or from kdebug's expected entries (cilium/maps/expected.ts),
// for comparing the two: its address, type and flags, the backends that take new connections and
// those kept for their own, session affinity (timeout, the backends it may keep a client on), the
// algorithm its Service picks, the Maglev table's backends, the source ranges checked. Map IDs
// and slot order are allocation detail, left out.
import {
  formatAddress,
  frontendKey,
  isWildcard,
  type CiliumBackend,
  type CiliumFrontend,
} from '../../src/core/dataplane/cilium/read/listing.js';
import type { ExpectedMapEntry } from '../../src/core/dataplane/cilium/maps/expected.js';

type Address = { ip: string; port: number; protocol?: CiliumBackend['protocol'] };

/** An entry's behaviour; `protocols` false where the dump prints none (1.17). */
function behaviour(
  e: {
    key: Address & { internal?: boolean };
    type?: string;
    flags: string[];
    rotation: Address[];
    kept: Address[];
    affinitySeconds?: number;
    algorithm?: string;
    maglev: Address[];
    affinity: Address[];
    sourceRanges?: string[];
  },
  protocols: boolean,
) {
  const at = (a: Address) => formatAddress({ ...a, protocol: protocols ? a.protocol : undefined });
  const set = (l: Address[]) => l.map(at).sort();
  // 1.17 prints a wildcard entry as <zero>, without its port
  const key = !protocols && isWildcard(e.key.ip) ? { ...e.key, ip: '0.0.0.0', port: 0 } : e.key;
  return {
    key: frontendKey({ ...key, protocol: protocols ? key.protocol : undefined }),
    type: e.type,
    flags: e.flags,
    rotation: set(e.rotation),
    kept: set(e.kept),
    affinitySeconds: e.affinitySeconds,
    algorithm: e.algorithm,
    maglev: set(e.maglev),
    affinity: set(e.affinity),
    // the source-range map is read only where the entry checks the source
    sourceRanges: e.flags.includes('check source-range') ? [...(e.sourceRanges ?? [])].sort() : [],
  };
}

export const fromDump = (f: CiliumFrontend, protocols: boolean) =>
  behaviour(
    {
      ...f,
      key: f,
      rotation: f.backends.filter((b) => b.inRotation),
      kept: f.backends.filter((b) => !b.inRotation),
      maglev: f.backends.filter((b) => b.maglev !== undefined),
      affinity: f.backends.filter((b) => b.affinity),
    },
    protocols,
  );

export const fromModel = (e: ExpectedMapEntry, protocols: boolean) =>
  behaviour(
    {
      ...e,
      key: { ...e.frontend, ip: e.ip },
      type: e.frontend.type,
      affinitySeconds: e.frontend.affinitySeconds,
      rotation: e.backends.slice(0, e.count),
      kept: e.backends.slice(e.count),
      maglev: e.maglev ? e.backends.slice(0, e.count) : [],
    },
    protocols,
  );
