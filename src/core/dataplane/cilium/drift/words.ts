// How Cilium drift writes what it compares: a frontend's and a backend's line, its Service port,
// an information note, and why a table that disagrees with the objects does.
import { driftFinding, type DriftId, type DriftSaid } from '../../drift.js';
import type { ServicePortName } from '../../../model.js';
import type { ExpectedFrontend } from '../expected/expected.js';
import {
  formatAddress,
  frontendKey,
  type CiliumBackend,
  type CiliumFrontend,
} from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';

export const nameOf = (f: Pick<ExpectedFrontend, 'service' | 'portName'>) =>
  `${f.service}${f.portName ? `:${f.portName}` : ''}` as ServicePortName;
export const backendLine = (b: Pick<CiliumBackend, 'ip' | 'port' | 'protocol' | 'state'>) =>
  `${formatAddress(b)}${b.state ? ` (${b.state})` : ''}`;
export const frontendLine = (f: {
  ip: string;
  port: number;
  protocol?: CiliumFrontend['protocol'];
  type?: string;
}) => `${frontendKey(f)}${f.type ? ` ${f.type}` : ''}`;

/** What the agent does as designed, or what was not read of it: information, not drift. */
export const infoNote = (input: CiliumDriftInput, id: DriftId, said: DriftSaid) =>
  driftFinding(id, said, { node: input.node, source: input.table.source }, 'info');

/** Where a backend's weight comes from (expected/backends.ts weightOf). */
export const WEIGHT_SOURCE =
  "the slice's service.cilium.io/weight from Cilium 1.20, 0 putting its backends in maintenance; 100 where it has none";

/** Why an agent's table disagrees with the API objects, and what to do about it. */
export const NOT_APPLIED =
  "The agent writes its tables from the Service and its EndpointSlices: it has not applied their last change. Its log says why (a lost watch of the API server, a failing reconcile); deleting the agent's Pod makes it rebuild them.";

/** A frontend a Local Redirect Policy takes (db/show frontends' RedirectTo; service list's
 * LocalRedirect type, before 1.17): its backends are the policy's node-local Pods, which the
 * objects kdebug reads do not give, so they are not compared with the Service's EndpointSlices,
 * and the Service's endpoints are not where this node sends it (Cilium's redirectpolicy). */
export const redirected = (
  input: CiliumDriftInput,
  want: ExpectedFrontend,
  got: CiliumFrontend,
) => {
  const policy = got.redirectTo
    ? `Local Redirect Policy ${got.redirectTo}`
    : 'a Local Redirect Policy';
  const to = got.backends.map((b) => backendLine({ ...b, protocol: b.protocol ?? got.protocol }));
  return infoNote(input, 'cilium-local-redirect', {
    service: nameOf(want),
    title: `${frontendKey(got)} is redirected by ${policy} to ${to.length > 0 ? to.join(', ') : 'no Pod'}`,
    message: `Traffic to ${frontendKey(got)} of ${nameOf(want)} on ${input.node} is redirected by ${policy} to ${to.length > 0 ? `its Pods on this node (${to.join(', ')})` : 'its Pods on this node, of which the listing shows none'}: the Service's endpoints are not used here, so they are not compared with what the agent holds for it.`,
    actual: [
      `${input.table.source}:${got.line}: ${frontendKey(got)} ${got.redirectTo ? `RedirectTo ${got.redirectTo}` : got.type}`,
    ],
  });
};
