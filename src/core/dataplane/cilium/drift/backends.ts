// Drift of one frontend the agent holds: its backends against the EndpointSlices' (by address,
// states where the listing shows them), and its reconcile status.
import type { NextCommand } from '../../../findings/next-command.js';
import { quote, type AddFinding, type DriftFinding } from '../../drift.js';
import type { ExpectedBackend, ExpectedFrontend } from '../expected/expected.js';
import { inRotation } from '../expected/backends.js';
import {
  formatAddress,
  frontendKey,
  type CiliumBackend,
  type CiliumFrontend,
} from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { NOT_APPLIED, WEIGHT_SOURCE, backendLine, infoNote, nameOf } from './words.js';
import { bySelection } from './not-known.js';

/** Backends compared by address; states where the listing shows them. */
export function backends(
  asExpected: ExpectedFrontend,
  got: CiliumFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  notes: DriftFinding[],
  next: NextCommand | undefined,
) {
  // service topology not known: the selection the listing shows, where it is one of the two
  const want = bySelection(asExpected, got);
  const service = nameOf(want);
  const source = input.table.source;
  const protocols = got.protocol !== undefined;
  const key = (b: { ip: string; port: number; protocol?: CiliumFrontend['protocol'] }) =>
    formatAddress({ ...b, protocol: protocols ? (b.protocol ?? want.protocol) : undefined });
  const have = new Map(got.backends.map((b) => [key(b), b]));
  const wanted = new Map(want.backends.map((b) => [key(b), b]));
  const rotation = new Set(inRotation(want.backends).map(key));
  // the frontend a missing backend belongs under, as the agent holds it
  const where = quote(source, got.line, frontendKey(got), true);
  // a listing that leaves backends out ("+ 4 more") can only show what it shows
  const slots = input.table.form === 'maps-dump' || input.table.form === 'bpf-lb-list';
  if (!got.backendsNotShown && !got.backendsUnread && !got.serviceRowUnseen)
    for (const [k, b] of wanted) {
      if (have.has(k)) continue;
      // the BPF maps give a backend in maintenance no slot: it is the agent's table's only
      if (slots && b.state === 'maintenance') continue;
      const used = inRotation(want.backends).includes(b);
      add('cilium-backend-missing', {
        service,
        title: `${frontendKey(got)}: backend ${k} missing`,
        message: `The ${want.type} frontend ${frontendKey(got)} of ${service} on ${node(input)} does not list backend ${k}${b.target ? ` (${b.target})` : ''}, which its EndpointSlice says is ${b.state}${used ? ': Cilium sends it no new connections, so the others carry its share' : ''}. ${NOT_APPLIED}`,
        expected: [backendLine(b)],
        actual: [where],
        next,
      });
    }
  for (const [k, b] of have) {
    const w = wanted.get(k);
    if (!w) {
      add('cilium-backend-stale', {
        service,
        title: `${frontendKey(got)}: stale backend ${k}`,
        message: `The ${want.type} frontend ${frontendKey(got)} of ${service} on ${node(input)} still lists backend ${k}${b.state ? ` (${b.state})` : ''}, which no EndpointSlice of the Service names${want.localOnly ? ' for this node (a Local traffic policy keeps only its own)' : ''}: connections sent there reach a Pod that is gone or another workload. ${NOT_APPLIED}`,
        expected: want.backends.map(backendLine),
        actual: [quote(source, b.line, backendLine(b))],
        next,
      });
      continue;
    }
    weight(want, k, w, b, input, add, next);
    // the maps dump shows which backends take new connections: the ones the states give
    if (
      b.inRotation !== undefined &&
      b.inRotation !== rotation.has(k) &&
      b.state !== 'quarantined'
    ) {
      if (!b.inRotation) {
        notes.push(
          infoNote(input, 'cilium-backend-state-differs', {
            service,
            title: `${frontendKey(got)}: backend ${k} quarantined in the BPF map`,
            message: `The BPF map keeps backend ${k} of ${service} on ${node(input)} past the backends that take new connections: Cilium's health checking quarantined it (its EndpointSlice says ${w.state}), so new connections go to the others until it answers again.`,
            expected: [backendLine(w)],
            actual: [quote(source, b.line, backendLine(b))],
          }),
        );
        continue;
      }
      add('cilium-backend-state-differs', {
        service,
        title: `${frontendKey(got)}: backend ${k} takes new connections, expected none`,
        message: `Cilium's BPF map on ${node(input)} gives backend ${k} of ${service} new connections, but its EndpointSlice makes it ${w.state}${rotation.size ? ` while ${[...rotation].join(', ')} ${rotation.size === 1 ? 'is' : 'are'} ready` : ''}: new connections go to an endpoint that is not ready.`,
        expected: inRotation(want.backends).map(backendLine),
        actual: [quote(source, b.line, backendLine(b))],
        next,
      });
      continue;
    }
    if (!b.state || b.state === w.state) continue;
    if (b.state === 'quarantined') {
      notes.push(
        infoNote(input, 'cilium-backend-state-differs', {
          service,
          title: `${frontendKey(got)}: backend ${k} quarantined`,
          message: `Cilium's health checking quarantined backend ${k} of ${service} on ${node(input)}: it takes no new connections until it answers again (its EndpointSlice says ${w.state}).`,
          expected: [backendLine(w)],
          actual: [stateEvidence(b, source)],
        }),
      );
      continue;
    }
    add('cilium-backend-state-differs', {
      service,
      title: `${frontendKey(got)}: backend ${k} ${b.state}, expected ${w.state}`,
      message: `Backend ${k} of ${service} is ${b.state} in Cilium's table on ${node(input)}, but its EndpointSlice makes it ${w.state}: ${w.state === 'active' ? 'it takes no new connections though it is ready' : 'new connections still go to an endpoint that is not ready'}.`,
      expected: [backendLine(w)],
      actual: [stateEvidence(b, source)],
      next,
    });
  }
}

const node = (input: CiliumDriftInput) => input.node;

/** A backend's state where it was read: the backends table's line, where that listing gave it. */
const stateEvidence = (b: CiliumBackend, source: string) =>
  b.stateAt
    ? quote(b.stateAt.source, b.stateAt.line, backendLine(b))
    : quote(source, b.line, backendLine(b));

/** A backend's weight where the listing shows it (service list -o json): Maglev fills the
 * frontend's table by it. */
function weight(
  want: ExpectedFrontend,
  k: string,
  w: ExpectedBackend,
  b: CiliumBackend,
  input: CiliumDriftInput,
  add: AddFinding,
  next: NextCommand | undefined,
) {
  if (b.weight === undefined || b.weight === w.weight) return;
  add('cilium-backend-weight-differs', {
    service: nameOf(want),
    title: `${frontendKey(want)}: backend ${k} weight ${b.weight}, expected ${w.weight}`,
    message: `Backend ${k} of ${nameOf(want)} has weight ${b.weight} in Cilium's table on ${input.node}, but its EndpointSlice gives it ${w.weight} (${WEIGHT_SOURCE}): where Maglev picks the backend, it fills the table by the weights the agent holds, so this backend takes another share of new connections than the EndpointSlices say. ${NOT_APPLIED}`,
    expected: [`${backendLine(w)} weight ${w.weight}`],
    actual: [quote(input.table.source, b.line, `${backendLine(b)} weight ${b.weight}`)],
    next,
  });
}

/** The load-balancer table's reconcile status: anything but Done is not (yet) in the maps. */
export function status(
  want: ExpectedFrontend,
  got: CiliumFrontend,
  input: CiliumDriftInput,
  add: AddFinding,
  next: NextCommand | undefined,
) {
  if (!got.status || got.status === 'Done') return;
  const error = /^Error/i.test(got.status);
  add('cilium-frontend-not-reconciled', {
    service: nameOf(want),
    title: `${frontendKey(got)}: ${got.status}`,
    message: `Cilium's agent on ${input.node} has not written frontend ${frontendKey(got)} of ${nameOf(want)} to its BPF maps (status ${got.status})${error ? ': the maps hold an older state or none, and the agent retries; its log says why' : ''}.`,
    actual: [`${input.table.source}:${got.line}`],
    next,
  });
}
