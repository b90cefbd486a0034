// Drift of the health server's frontends (expected/health-server.ts): one missing, a Service's
// several of which the agent holds one, and those not compared.
import type { NextCommand } from '../../../findings/next-command.js';
import { lineAt, type AddFinding, type DriftFinding } from '../../drift.js';
import type { ExpectedFrontend } from '../expected/expected.js';
import { healthServerOf } from '../expected/health-server.js';
import { frontendKey } from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { NOT_APPLIED, backendLine, frontendLine, infoNote, nameOf } from './words.js';

/** Where the health server's frontend on a LoadBalancer IP is, and what a missing one does. */
const healthServerText = (f: ExpectedFrontend) =>
  `the health server's frontend ${frontendLine(f)}, which answers load balancers' health checks of ${healthServerOf(f.service)} (its healthCheckNodePort ${f.port}) on its LoadBalancer IP`;
const HEALTH_CHECKS_FAIL =
  'a load balancer that checks health at that address gets no answer from this node and sends it no traffic, whether or not it runs a Pod of the Service';

export function healthServerMissing(
  want: ExpectedFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  next: NextCommand | undefined,
) {
  add('cilium-frontend-missing', {
    service: nameOf(want),
    title: `no frontend ${frontendLine(want)}`,
    message: `Cilium's agent on ${input.node} holds no ${healthServerText(want)} (enable-health-check-loadbalancer-ip): ${HEALTH_CHECKS_FAIL}. ${NOT_APPLIED}`,
    expected: [`${frontendLine(want)} -> ${want.backends.map(backendLine).join(', ')}`],
    next,
  });
}

/** None of a Service's frontends at several addresses, of which the agent holds one. */
export function oneOfMissing(
  want: ExpectedFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  next: NextCommand | undefined,
) {
  const all = input.expected.filter((f) => f.oneOf && f.service === want.service);
  add('cilium-frontend-missing', {
    service: nameOf(want),
    title: `no frontend ${all.map(frontendKey).join(' or ')} ${want.type}`,
    message: `Cilium's agent on ${input.node} holds none of ${all.map(frontendKey).join(', ')} for ${want.service}: it keeps the health server's frontend on one of the Service's LoadBalancer IPs (the last it saw), and here on none, so ${HEALTH_CHECKS_FAIL}. ${NOT_APPLIED}`,
    expected: all.map((f) => `${frontendLine(f)} -> ${f.backends.map(backendLine).join(', ')}`),
    next,
  });
}

/** The health server's frontends not compared: why, and what of the listing and the objects it
 * leaves aside, so that no absence is read as agreement. */
export function healthServersNotCompared(
  input: CiliumDriftInput,
  h: { why: string; services: string[] },
  notRead: DriftFinding[],
) {
  const listed = input.table.frontends.filter((f) => healthServerOf(f.service));
  if (listed.length === 0 && h.services.length === 0) return;
  notRead.push(
    infoNote(input, 'table-not-captured', {
      title: "the health server's frontends not compared",
      message: `The frontends Cilium's agent on ${input.node} makes for its health server on LoadBalancer IPs are not compared: ${h.why}.${h.services.length ? ` Services with a health check node port: ${h.services.join(', ')}.` : ''}`,
      actual: listed.map((f) => lineAt(input.table.source, f.line, frontendLine(f))),
    }),
  );
}
