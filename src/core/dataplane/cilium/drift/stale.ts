// Drift of the frontends the agent holds that the objects do not account for (a whole-node
// comparison only).
import type { NextCommand } from '../../../findings/next-command.js';
import { lineAt, quote, type AddFinding, type DriftFinding } from '../../drift.js';
import { healthServerOf } from '../expected/health-server.js';
import { frontendKey, isDropEntry, isWildcard, type CiliumFrontend } from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { frontendLine, infoNote, nameOf } from './words.js';
import { listedWhole } from '../../../facts/service-list-scope.js';

/** Frontends the objects do not account for (a whole-node comparison only). */
export function stale(
  input: CiliumDriftInput,
  matched: Set<CiliumFrontend>,
  add: AddFinding,
  next: NextCommand | undefined,
  /** What of the listing is not compared (1.17's portless wildcard entries). */
  notRead: DriftFinding[],
) {
  const services = new Set(input.services);
  // one of a Service read is accounted for by it; of another, only where its namespace's list was
  // read whole is that Service known to be gone (a frontend naming none: every namespace's)
  const known = (f: CiliumFrontend) => {
    const owner = healthServerOf(f.service) ?? f.service;
    if (owner !== undefined && services.has(owner)) return true;
    return owner === undefined
      ? input.listed.kind === 'all'
      : listedWhole(input.listed, owner.split('/')[0]!);
  };
  const wanted = new Set(input.expected.map((f) => `${f.port}`));
  // 1.17 prints a NodePort's wildcard entry as <zero>, without its port: whose it is, is not said
  const portless = input.table.frontends.filter((f) => isWildcard(f.ip) && f.port === 0);
  if (portless.length > 0)
    notRead.push(
      infoNote(input, 'table-not-captured', {
        title: `${portless.length} wildcard BPF map ${portless.length === 1 ? 'entry' : 'entries'} not compared`,
        message: `The BPF map on ${input.node} lists ${portless.length === 1 ? 'a wildcard entry' : 'wildcard entries'} as <zero> without a port (Cilium 1.17's bpf lb list): which Service's NodePort each is cannot be read, so ${portless.length === 1 ? 'it is' : 'they are'} not compared.`,
        actual: portless.map((f) => lineAt(input.table.source, f.line, frontendLine(f))),
      }),
    );
  for (const f of input.table.frontends) {
    if (matched.has(f) || f.type === 'HostPort' || f.type === 'LocalRedirect') continue;
    if (portless.includes(f)) continue;
    if (f.l7Proxy) continue;
    if (!known(f)) continue;
    if (input.healthServers && healthServerOf(f.service)) continue; // said as not compared
    if (isDropEntry(f)) continue; // 1.19's drop entry of a VIP: no Service's own
    // a NodePort on a node address is the wildcard's expansion, matched by port
    if ((f.type === 'NodePort' || isWildcard(f.ip)) && wanted.has(`${f.port}`)) continue;
    if (input.expected.some((w) => w.ip === f.ip && w.port === f.port && f.protocol === undefined))
      continue;
    add('cilium-frontend-stale', {
      ...(f.service ? { service: nameOf({ service: f.service, portName: f.portName ?? '' }) } : {}),
      title: `frontend ${frontendLine(f)} not in the objects`,
      message: healthServerOf(f.service)
        ? `Cilium's agent on ${input.node} holds the health server's frontend ${frontendKey(f)} for ${healthServerOf(f.service)}, which neither the Service (a LoadBalancer IP, externalTrafficPolicy Local, a healthCheckNodePort of ${f.port}) nor the agent's settings as read (enable-health-check-loadbalancer-ip) make here: left from an earlier state of either.`
        : `Cilium's agent on ${input.node} holds frontend ${frontendKey(f)}${f.service ? ` for ${f.service}` : ''}, which no Service in the objects makes: a deleted Service's address still load-balanced, or one from another source (a local redirect policy, clustermesh).`,
      actual: [quote(input.table.source, f.line, frontendLine(f))],
      next,
    });
  }
}
