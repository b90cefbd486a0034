// Drift of the agent's own table against its BPF maps, where both were read: the datapath uses
// the maps.
import { quote, type AddFinding, type DriftFinding, type Quote } from '../../drift.js';
import type { ServicePortName } from '../../../model.js';
import type { ExpectedFrontend } from '../expected/expected.js';
import { inRotation } from '../expected/backends.js';
import {
  frontendKey,
  type CiliumBackend,
  type CiliumFrontend,
  type CiliumTable,
} from '../read/listing.js';
import type { CiliumDriftInput } from '../drift.js';
import { Frontends } from './frontends.js';
import { backendLine, frontendLine, infoNote, nameOf } from './words.js';

/** The agent's table against its BPF maps: the datapath uses the maps. */
export function maps(
  input: CiliumDriftInput,
  bpf: CiliumTable,
  add: AddFinding,
  notes: DriftFinding[],
) {
  const inMaps = new Frontends(bpf);
  for (const f of input.table.frontends) {
    if (f.status && f.status !== 'Done') continue; // said already: not written yet
    if (f.internal && !bpf.frontends.some((m) => m.internal)) continue;
    const probe = {
      ...f,
      protocol: f.protocol ?? 'tcp',
      type: f.type ?? 'ClusterIP',
      service: f.service ?? '',
      portName: f.portName ?? '',
      servicePort: f.port,
      localOnly: false,
      backends: [],
    } as ExpectedFrontend;
    const entries = inMaps.find(probe);
    const service = f.service
      ? nameOf({ service: f.service, portName: f.portName ?? '' })
      : undefined;
    if (entries.length === 0) {
      add('cilium-bpf-map-differs', {
        ...(service ? { service } : {}),
        title: `${frontendKey(f)} not in the BPF maps`,
        message: `Cilium's table on ${input.node} holds frontend ${frontendKey(f)}, but its BPF service map has no entry for it: the datapath does not load-balance it, whatever the table says.`,
        expected: [frontendLine(f)],
        actual: [`${bpf.source}: no entry`],
      });
      continue;
    }
    for (const m of entries) entry(input, f, m, service, add, notes);
  }
}

/** One BPF map entry of the table's frontend `f` (its own, or a NodePort address's): the
 * backends that take new connections there are the ones the table's states give. */
function entry(
  input: CiliumDriftInput,
  f: CiliumFrontend,
  m: CiliumFrontend,
  service: ServicePortName | undefined,
  add: AddFinding,
  notes: DriftFinding[],
) {
  const bpf = input.maps!;
  // a table without its backends column says nothing the maps could differ from
  if (f.backendsUnread) return;
  const k = (b: CiliumBackend) => `${b.ip}:${b.port}`;
  const used = new Set(
    (m.backends.some((b) => b.inRotation !== undefined)
      ? m.backends.filter((b) => b.inRotation)
      : m.backends
    ).map(k),
  );
  const want = new Set(inRotation(f.backends).map(k));
  const inMap = new Set(m.backends.map(k));
  // in the map past its count: kept for its connections, as Cilium's health checker (or a
  // terminating endpoint) puts it; the table of 1.20 does not show that state
  const held = [...want].filter((b) => !used.has(b) && inMap.has(b));
  if (held.length)
    notes.push(
      infoNote(input, 'cilium-backend-state-differs', {
        ...(service ? { service } : {}),
        title: `${frontendKey(m)}: ${held.join(', ')} quarantined in the BPF map`,
        message: `For frontend ${frontendKey(m)} on ${input.node}, the BPF map keeps ${held.join(', ')} past the backends that take new connections: Cilium's health checking quarantined ${held.length === 1 ? 'it' : 'them'} (or ${held.length === 1 ? 'it is' : 'they are'} terminating), so new connections go to the others until ${held.length === 1 ? 'it answers' : 'they answer'} again.`,
        expected: inRotation(f.backends).map(backendLine),
        // the ones quarantined differ; the others are as the table has them
        actual: m.backends.map((b) =>
          quote(bpf.source, b.line, backendLine(b), !held.includes(k(b))),
        ),
      }),
    );
  // a map entry whose backends the listing leaves out can only show what it shows
  const missing =
    m.backendsNotShown || m.serviceRowUnseen ? [] : [...want].filter((b) => !inMap.has(b));
  // new connections where the table's states send none (a terminating backend while an active
  // one is left), or to a backend the table does not list
  const extra = [...used].filter((b) => !want.has(b));
  if (missing.length || extra.length)
    add('cilium-bpf-map-differs', {
      ...(service ? { service } : {}),
      title: `${frontendKey(m)}: BPF map backends differ from the agent's table`,
      message: `For frontend ${frontendKey(m)} on ${input.node}, the BPF map ${missing.length ? `lacks ${missing.join(', ')}` : ''}${missing.length && extra.length ? ' and ' : ''}${extra.length ? `gives new connections to ${extra.join(', ')}, which the table does not` : ''}: the datapath follows the map.`,
      expected: inRotation(f.backends).map(backendLine),
      // the ones taking connections the table gives none differ; the others are as it has them
      actual: m.backends.map((b) =>
        quote(bpf.source, b.line, backendLine(b), !extra.includes(k(b))),
      ),
    });
}

/** The BPF map entries (read besides the table) of a frontend the agent's table lacks, as the
 * evidence of it: the datapath looks up the map, so it still translates what they hold. */
export function heldByMaps(input: CiliumDriftInput, want: ExpectedFrontend): Quote[] {
  const bpf = input.maps;
  if (!bpf) return [];
  return new Frontends(bpf)
    .find(want)
    .flatMap((m) => [
      quote(bpf.source, m.line, frontendLine(m)),
      ...m.backends.map((b) => quote(bpf.source, b.line, backendLine(b))),
    ]);
}
