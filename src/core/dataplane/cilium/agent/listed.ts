// What the agent's own listing shows of the settings a refused cilium-config leaves not known
// (agent.ts notKnown): a frontend it lists of a family means it runs that family, whatever
// enable-ipv4 and enable-ipv6 said in the configuration it started on; a Service's ClusterIP it
// lists means it handles that Service, so its k8s-service-proxy-name is the Service's label.
import type { Service } from '../../../kube/objects.js';
import { familyOf } from '../../../ipv6.js';
import { isDropEntry, type CiliumFrontend, type CiliumTable } from '../read/listing.js';
import { labels } from '../expected/service-meta.js';
import { knows, type CiliumAgent, type ConfigOnlySetting } from './agent.js';

const FAMILY = { ipv4: 'IPv4', ipv6: 'IPv6' } as const;

/** `agent` with each family not known that `tables` (its table, its BPF maps) list a frontend
 * of taken as on, and its service proxy name as the Services whose ClusterIPs they list say it
 * (where they agree), observed there. */
export function listedAgent(
  agent: CiliumAgent,
  tables: readonly (CiliumTable | undefined)[],
  services: readonly Service[],
): CiliumAgent {
  // cilium-config taken as read (the common case): nothing to look for
  if (agent.settings.notKnown.length === 0) return agent;
  const frontends = tables.flatMap((t) => t?.frontends ?? []).filter((f) => !isDropEntry(f));
  const shown = (['ipv4', 'ipv6'] as const).filter(
    (s) => !knows(agent.settings, s) && frontends.some((f) => familyOf(f.ip) === FAMILY[s]),
  );
  const name = knows(agent.settings, 'serviceProxyName')
    ? undefined
    : proxyNameListed(frontends, services);
  if (shown.length === 0 && name === undefined) return agent;
  const known = new Set<ConfigOnlySetting>([
    ...shown,
    ...(name !== undefined ? (['serviceProxyName'] as const) : []),
  ]);
  const settings = {
    ...agent.settings,
    notKnown: agent.settings.notKnown.filter((s) => !known.has(s)),
    ...(name !== undefined ? { serviceProxyName: name } : {}),
  };
  for (const s of shown) settings[s] = true;
  return { ...agent, settings };
}

/** The service-proxy-name label (none: "") of the Services a listed frontend is the ClusterIP
 * and port of, where they all carry the same; undefined where none is listed or they differ. */
function proxyNameListed(
  frontends: readonly CiliumFrontend[],
  services: readonly Service[],
): string | undefined {
  // by address and port: a big listing against every Service, once each
  const listed = new Set(frontends.map((f) => `${f.ip} ${f.port}`));
  const names = new Set(
    services
      .filter((svc) =>
        svc.clusterIPs.some((ip) => svc.ports.some((p) => listed.has(`${ip} ${p.port}`))),
      )
      .map((svc) => labels(svc)['service.kubernetes.io/service-proxy-name'] ?? ''),
  );
  return names.size === 1 ? [...names][0] : undefined;
}
