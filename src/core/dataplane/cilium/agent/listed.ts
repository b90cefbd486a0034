// What the agent's own listing shows of the settings a refused cilium-config leaves not known
// (agent.ts notKnown): a frontend it lists of a family means it runs that family, whatever
// enable-ipv4 and enable-ipv6 said in the configuration it started on.
import { familyOf } from '../../../ipv6.js';
import { isDropEntry, type CiliumTable } from '../read/listing.js';
import { knows, type CiliumAgent, type ConfigOnlySetting } from './agent.js';

const FAMILY = { ipv4: 'IPv4', ipv6: 'IPv6' } as const;

/** `agent` with each family not known that `tables` (its table, its BPF maps) list a frontend
 * of taken as on, observed there. */
export function listedAgent(
  agent: CiliumAgent,
  tables: readonly (CiliumTable | undefined)[],
): CiliumAgent {
  const listed = (family: 'IPv4' | 'IPv6') =>
    tables.some((t) => t?.frontends.some((f) => !isDropEntry(f) && familyOf(f.ip) === family));
  const shown = (['ipv4', 'ipv6'] as const).filter(
    (s) => !knows(agent.settings, s) && listed(FAMILY[s]),
  );
  if (shown.length === 0) return agent;
  const known = new Set<ConfigOnlySetting>(shown);
  const settings = {
    ...agent.settings,
    notKnown: agent.settings.notKnown.filter((s) => !known.has(s)),
  };
  for (const s of shown) settings[s] = true;
  return { ...agent, settings };
}
