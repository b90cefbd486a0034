// What drift leaves to the agent's own listing where a setting only a refused cilium-config gives
// is not known (agent.ts notKnown): a family's frontends (enable-ipv4, enable-ipv6), and a
// Service's (k8s-service-proxy-name), not compared where the agent lists none of that family or
// no Service that says the name (agent/listed.ts); the backends service topology selects
// (enable-service-topology), taken as the listing holds them where it holds either selection.
import type { DriftFinding } from '../../drift.js';
import type { ExpectedFrontend } from '../expected/expected.js';
import { SETTING_NOT_KNOWN } from '../agent/refused.js';
import { frontendKey, type CiliumFrontend } from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { backendLine, frontendLine, infoNote } from './words.js';

const OPTION = { IPv4: 'enable-ipv4', IPv6: 'enable-ipv6' } as const;

/** The frontends of a family not known, or of a Service whether the agent handles is not known,
 * that the agent lists none of: not compared, said so. */
export function familiesNotCompared(
  input: CiliumDriftInput,
  unlisted: readonly ExpectedFrontend[],
): DriftFinding[] {
  const proxied = unlisted.filter((f) => f.proxyNameNotKnown && !f.familyNotKnown);
  const services = [...new Set(proxied.map((f) => f.service))];
  const byName =
    proxied.length === 0
      ? []
      : [
          infoNote(input, 'table-not-captured', {
            title: `${services.length} Service${services.length === 1 ? '' : 's'} not compared`,
            message: `Cilium's agent on ${input.node} lists none of the ClusterIPs of ${services.join(', ')}, and which Services it handles (k8s-service-proxy-name, against each one's service.kubernetes.io/service-proxy-name label) is ${SETTING_NOT_KNOWN}: the absence of ${proxied.map(frontendKey).join(', ')} says nothing, and they were not compared.`,
            expected: proxied.map(
              (f) =>
                `${frontendLine(f)} -> ${f.backends.map(backendLine).join(', ') || 'no backends'}`,
            ),
          }),
        ];
  return [
    ...byName,
    ...(['IPv4', 'IPv6'] as const).flatMap((family) => {
      const of = unlisted.filter((f) => f.familyNotKnown === family);
      if (of.length === 0) return [];
      return [
        infoNote(input, 'table-not-captured', {
          title: `${of.length} ${family} frontend${of.length === 1 ? '' : 's'} not compared`,
          message: `Cilium's agent on ${input.node} lists no ${family} frontend, and whether it runs ${family} (${OPTION[family]}) is ${SETTING_NOT_KNOWN}: the absence of ${of.map(frontendKey).join(', ')} says nothing, and they were not compared.`,
          expected: of.map(
            (f) =>
              `${frontendLine(f)} -> ${f.backends.map(backendLine).join(', ') || 'no backends'}`,
          ),
        }),
      ];
    }),
  ];
}

/** `want` as the listing shows the agent selects: with service topology on where that is not
 * known and `got` lists exactly the backends topology selects, else as expected (topology off). */
export function bySelection(want: ExpectedFrontend, got: CiliumFrontend): ExpectedFrontend {
  const on = want.topologyNotKnown;
  if (!on) return want;
  const key = (b: { ip: string; port: number }) => `${b.ip}:${b.port}`;
  const listed = new Set(got.backends.map(key));
  const same = on.length === listed.size && on.every((b) => listed.has(key(b)));
  return same ? { ...want, backends: on } : want;
}

/** The Services whose backends depend on service topology, not known: said once. */
export function topologyNotCompared(input: CiliumDriftInput): DriftFinding[] {
  const services = [
    ...new Set(input.expected.filter((f) => f.topologyNotKnown).map((f) => f.service)),
  ];
  if (services.length === 0) return [];
  return [
    infoNote(input, 'table-not-captured', {
      title: `topology-aware backend selection not known for ${services.join(', ')}`,
      message: `Whether Cilium's agent on ${input.node} heeds topology hints and trafficDistribution (enable-service-topology) is ${SETTING_NOT_KNOWN}: the backends of ${services.join(', ')} are compared with the selection the agent lists, with topology where it lists exactly that one, else without; which one it makes is not said.`,
    }),
  ];
}
