// Step 2: does each Service port's targetPort (a number or a name) lead to a port the selected
// Pods declare, with the same protocol? Declaring containerPorts is optional, so a number no Pod
// declares is a strong hint rather than proof; recorded probes to the endpoints settle it.
import { read } from '../findings/evidence.js';
import type { Pod, Service, ServicePort } from '../kube/objects.js';
import type { Evidence, Finding } from '../model.js';
import { kubectl, valid } from '../findings/next-command.js';
import {
  type Check,
  count,
  endpointSlicesOf,
  findingOf,
  list,
  pending,
  serviceRef,
} from './check.js';
import type { CheckContext } from './context.js';
import { connectProbe, probeSeen } from './reachability/probes.js';
import { portText } from './service.js';

const finding = findingOf('ports');

const declared = (pod: Pod) =>
  pod.containers.flatMap((c) => c.ports.map((p) => ({ container: c.name, ...p })));

/** "container nginx: 80/TCP (http)" lines, one per distinct Pod template. */
function portsEvidence(pods: Pod[]): string[] {
  const groups = new Map<string, string[]>();
  for (const pod of pods) {
    const sig =
      pod.containers
        .map(
          (c) =>
            `container ${c.name}: ${c.ports.length === 0 ? 'no ports declared' : c.ports.map((p) => `${p.containerPort}/${p.protocol}${p.name ? ` (${p.name})` : ''}`).join(', ')}`,
        )
        .join('; ') || 'no containers';
    groups.set(sig, [...(groups.get(sig) ?? []), pod.name]);
  }
  return [...groups].map(
    ([sig, names]) =>
      `${names.length === 1 ? `Pod ${names[0]}` : `${names.length} Pods (${names.slice(0, 2).join(', ')}${names.length > 2 ? ', ...' : ''})`} ${sig}`,
  );
}

/** Recorded probes of the endpoints on this port, as evidence. */
function probeEvidence(ctx: CheckContext, port: ServicePort): Evidence[] {
  const out: Evidence[] = [];
  for (const e of ctx.endpoints(port)) {
    const probe = connectProbe(e.ip, e.port, port.protocol);
    if (!probe) continue;
    for (const node of ctx.nodeNames()) {
      const r = ctx.probe(node, probe);
      if (r) out.push(probeSeen(node, probe, r));
    }
  }
  return out;
}

/** A JSON patch of one port's targetPort, to a port number or a valid port name. */
function patchTargetPort(svc: Service, index: number, value: number | string) {
  const target = typeof value === 'number' ? valid.port(value) : valid.portName(value);
  if (target === undefined) return undefined;
  const op = { op: 'replace', path: `/spec/ports/${index}/targetPort`, value };
  return kubectl(
    svc.namespace,
    'patch',
    'service',
    valid.name(svc.name),
    '--type=json',
    '-p',
    JSON.stringify([op]),
  );
}

/** Where the port is in spec.ports (the API keeps port and protocol unique): `NAME:PORT` leaves
 * the others out of svc.ports, not out of the object a patch edits. */
function specIndex(svc: Service, port: ServicePort): number {
  const spec = (svc.raw['spec'] as { ports?: { port?: unknown; protocol?: unknown }[] }) ?? {};
  return (spec.ports ?? []).findIndex(
    (p) => p.port === port.port && (p.protocol ?? 'TCP') === port.protocol,
  );
}

function checkPort(ctx: CheckContext, svc: Service, port: ServicePort, index: number): Finding[] {
  const spn = ctx.servicePortName(port);
  const pods = ctx.selectedPods();
  const out: Finding[] = [];
  const raw = ((svc.raw['spec'] as { ports?: { targetPort?: unknown }[] })?.ports ?? [])[index]
    ?.targetPort;
  if (typeof raw === 'string' && /^\d+$/.test(raw))
    out.push(
      finding(
        'target-port-string',
        'warn',
        `targetPort is the string "${raw}", not the number ${raw}`,
        {
          explanation: `Kubernetes reads a string targetPort as a port name: "${raw}" names no container port, so Pods may be left out of the endpoints, and current API servers reject a port name without a letter. Write it as a number: targetPort: ${raw}.`,
          evidence: [read(`spec.ports[${index}].targetPort: "${raw}"`, serviceRef(svc))],
          next: patchTargetPort(svc, index, Number(raw)),
          service: spn,
        },
      ),
    );
  const tp = port.targetPort;
  const ev = [`Service port ${portText(port)}`, ...portsEvidence(pods)].map((l) => read(l));
  const matching = (p: Pod) =>
    declared(p).filter((d) => (typeof tp === 'number' ? d.containerPort === tp : d.name === tp));
  const ok = pods.filter((p) => matching(p).some((d) => d.protocol === port.protocol));
  const otherProtocol = pods.filter(
    (p) => !ok.includes(p) && matching(p).some((d) => d.protocol !== port.protocol),
  );
  const missing = pods.filter((p) => !ok.includes(p) && !otherProtocol.includes(p));
  if (ok.length === pods.length) {
    out.push(
      finding(
        'target-port-ok',
        'pass',
        `${port.port}/${port.protocol} -> ${tp}: declared by ${count(pods.length, 'selected Pod')}`,
        {
          explanation: `targetPort ${tp} is a ${port.protocol} containerPort of every selected Pod.`,
          evidence: ev,
          service: spn,
        },
      ),
    );
    return out;
  }
  if (otherProtocol.length > 0) {
    const d = matching(otherProtocol[0]!)[0]!;
    out.push(
      finding(
        'port-protocol-mismatch',
        ok.length === 0 ? 'fail' : 'warn',
        `Service port is ${port.protocol}, the Pods' port ${tp} is ${d.protocol}`,
        {
          explanation: `${port.port}/${port.protocol} goes to targetPort ${tp}, but ${count(otherProtocol.length, 'selected Pod')} declare${otherProtocol.length === 1 ? 's' : ''} that port as ${d.protocol}. kube-proxy forwards ${port.protocol} only, so ${port.protocol} packets reach a port where the application listens for ${d.protocol}. Set the Service port's protocol to ${d.protocol} (or add a second port for it).`,
          evidence: ev,
          next: kubectl(svc.namespace, 'edit', 'service', valid.name(svc.name)),
          service: spn,
        },
      ),
    );
  }
  if (missing.length === 0) return out;
  const declaring = missing.filter((p) => declared(p).length > 0);
  if (typeof tp === 'number' && declaring.length === 0) {
    out.push(
      finding(
        'target-port-undeclared',
        'skip',
        `targetPort ${tp}: the Pods declare no containerPorts to compare with`,
        {
          explanation: `Declaring containerPorts is optional, so kdebug cannot tell from the Pod spec whether anything listens on ${tp}; the Reachability step probes the endpoints directly.`,
          evidence: [...ev, ...probeEvidence(ctx, port)],
          service: spn,
        },
      ),
    );
    return out;
  }
  const offered = [
    ...new Set(
      declaring
        .flatMap(declared)
        .filter((d) => d.protocol === port.protocol)
        .map((d) => (typeof tp === 'number' ? d.containerPort : (d.name ?? ''))),
    ),
  ].filter((x) => x !== '');
  const all = missing.length === pods.length;
  const named = typeof tp === 'string';
  const explanation = named
    ? `targetPort "${tp}" is a port name, and ${all ? 'no selected Pod has' : `${count(missing.length, 'selected Pod')} ha${missing.length === 1 ? 's' : 've'} no`} container port with that name${offered.length > 0 ? ` (they name ${list(offered.map(String))})` : ''}. The endpoint controller leaves such Pods out of the Service's endpoints, so ${all ? 'the Service has none' : 'they get no traffic'}. Rename the containerPort or point targetPort at a name the Pods use.`
    : `Traffic to ${port.port}/${port.protocol} is sent to port ${tp} of the Pods, but ${all ? 'no selected Pod declares' : `${count(missing.length, 'selected Pod')} do${missing.length === 1 ? 'es' : ''} not declare`} containerPort ${tp}${offered.length > 0 ? `: they declare ${list(offered.map(String))}` : ''}. The endpoints are listed with port ${tp}, so connections reach the Pods on a port where, by their spec, nothing listens${offered.length === 1 ? `. If the application listens on ${offered[0]}, set targetPort: ${offered[0]}` : ''}.`;
  const probes = probeEvidence(ctx, port);
  out.push(
    finding(
      'target-port-not-exposed',
      all ? 'fail' : 'warn',
      `targetPort ${named ? `"${tp}"` : tp}: ${all ? 'no selected Pod declares it' : `${count(missing.length, 'selected Pod')} do${missing.length === 1 ? 'es' : ''} not declare it`}`,
      {
        explanation,
        evidence: [...ev, ...probes],
        next:
          offered.length === 1
            ? (patchTargetPort(svc, index, offered[0]!) ??
              kubectl(svc.namespace, 'edit', 'service', valid.name(svc.name)))
            : kubectl(svc.namespace, 'edit', 'service', valid.name(svc.name)),
        service: spn,
      },
    ),
  );
  return out;
}

/** A Service port no EndpointSlice port is named for (name and protocol), where the slices name
 * theirs: kube-proxy joins them by name, so it gets no endpoints. Undefined where one matches. */
function slicePortMissing(ctx: CheckContext, svc: Service, port: ServicePort): Finding | undefined {
  const slicePorts = ctx.slices().flatMap((s) => s.ports);
  if (slicePorts.length === 0) return undefined;
  if (slicePorts.some((p) => p.name === port.name && p.protocol === port.protocol))
    return undefined;
  const named = list(
    slicePorts.map((p) => `${p.name ? `"${p.name}"` : '(unnamed)'} ${p.protocol}`),
  );
  return finding(
    'target-port-not-exposed',
    'fail',
    port.name
      ? `no EndpointSlice port is named "${port.name}"`
      : 'no EndpointSlice port is unnamed',
    {
      explanation: svc.selector
        ? `kube-proxy matches EndpointSlice ports to Service ports by name and protocol, and the EndpointSlice controller names each slice port after the Service port it serves. The EndpointSlices name their ports ${named}, so Service port ${port.name || '(unnamed)'} ${port.port}/${port.protocol} gets no endpoints, whatever Pods they list: they were written before the Service's ports last changed (a port renamed, or added) and the controller has not rewritten them (kube-controller-manager behind or not running), or they were edited by hand.`
        : `kube-proxy matches EndpointSlice ports to Service ports by name and protocol. The hand-made EndpointSlices name their ports ${named}, so Service port ${port.name || '(unnamed)'} ${port.port}/${port.protocol} gets no endpoints.`,
      evidence: [
        `Service port ${portText(port)}`,
        ...ctx
          .slices()
          .map(
            (s) =>
              `EndpointSlice ${s.name}: ports ${s.ports.map((p) => `${p.name || '(unnamed)'} ${p.port}/${p.protocol}`).join(', ')}`,
          ),
      ].map((l) => read(l)),
      next: svc.selector
        ? kubectl('kube-system', 'logs', '-l', 'component=kube-controller-manager', '--tail=50')
        : endpointSlicesOf(svc, 'yaml'),
      service: ctx.servicePortName(port),
    },
  );
}

/** A Service without a selector: its hand-made endpoints must name the Service's ports. */
function manualEndpoints(ctx: CheckContext, svc: Service): Finding[] {
  const slicePorts = ctx.slices().flatMap((s) => s.ports);
  return svc.ports.map((port) => {
    const missing = slicePortMissing(ctx, svc, port);
    if (missing) return missing;
    const match = slicePorts.find((p) => p.name === port.name && p.protocol === port.protocol);
    return finding(
      'target-port-manual',
      'skip',
      `${port.port}/${port.protocol}: no selector, the endpoints are managed by hand`,
      {
        explanation: `Without a selector Kubernetes does not resolve targetPort: the port in the hand-made EndpointSlice${match ? ` (${match.port})` : ''} is where traffic goes.`,
        evidence: [read(`Service port ${portText(port)}`, serviceRef(svc))],
        service: ctx.servicePortName(port),
      },
    );
  });
}

export const portsCheck: Check<'ports'> = {
  id: 'ports',
  title: 'Ports',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName'],
    id: 'ports-not-used',
    title: 'ExternalName: the ports are not used',
    explanation:
      'An ExternalName Service only aliases a DNS name; its ports are never used for forwarding.',
  },
  run(ctx) {
    const svc = ctx.service!;
    if (!svc.selector) return manualEndpoints(ctx, svc);
    const notCaptured = ctx.notCaptured('Pod');
    if (ctx.selectedPods().length === 0 && notCaptured && !ctx.waiting('objects'))
      return [
        finding(
          'pods-not-observed',
          'skip',
          'Pods not captured: the containerPorts are not checked',
          {
            explanation: `The targetPorts are compared with the containerPorts of the selected Pods, and kdebug did not see the Pods (${notCaptured}).`,
            evidence: svc.ports.map((p) => read(`Service port ${portText(p)}`, serviceRef(svc))),
          },
        ),
      ];
    if (ctx.selectedPods().length === 0)
      return ctx.waiting('objects')
        ? pending('reading the Pods')
        : [
            finding('ports-no-pods', 'skip', 'no selected Pods to compare the ports with', {
              explanation:
                'The targetPorts are compared with the containerPorts of the selected Pods; the selector matches none (see Selector).',
              evidence: svc.ports.map((p) => read(`Service port ${portText(p)}`, serviceRef(svc))),
            }),
          ];
    return svc.ports.flatMap((port) => {
      const found = checkPort(ctx, svc, port, specIndex(svc, port));
      // the Pods declare the port, and the slices list them under another port's name (where
      // they do not, the controller leaves the port out of the slices: said above)
      const unresolved = found.some((f) => f.status === 'fail');
      const unnamed = unresolved ? undefined : slicePortMissing(ctx, svc, port);
      return unnamed ? [...found, unnamed] : found;
    });
  },
};
