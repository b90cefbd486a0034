// Step 1: does the Service exist, and what is it? Headless and ExternalName Services are said
// to be what they are, since most of the later steps do not apply to them.
import type { Service, ServicePort } from '../kube/objects.js';
import { read, unseen } from '../findings/evidence.js';
import { listedWhole, serviceListScope } from '../facts/service-list-scope.js';
import type { NotRead } from '../facts/not-read.js';
import type { Evidence, Finding } from '../model.js';
import { kubectl, valid, kdebug } from '../findings/next-command.js';
import { type Check, count, findingOf, labelText, list, pending } from './check.js';
import type { CheckContext } from './context.js';
import { portsNamed } from '../kube/service-ref.js';

const finding = findingOf('service');

export const portText = (p: ServicePort) =>
  `${p.name ? `${p.name} ` : ''}${p.port}/${p.protocol} -> ${p.targetPort}${p.nodePort ? ` (node port ${p.nodePort})` : ''}`;

/** The Service's spec as evidence, read from the API. */
export function serviceEvidence(svc: Service): Evidence[] {
  const out = [`Service ${svc.namespace}/${svc.name}: type ${svc.type}`];
  if (svc.type === 'ExternalName') out.push(`spec.externalName: ${svc.externalName ?? '(empty)'}`);
  else out.push(`spec.clusterIP: ${svc.clusterIP ?? '(none)'}`);
  for (const p of svc.ports) out.push(`spec.ports: ${portText(p)}`);
  if (svc.type !== 'ExternalName')
    out.push(`spec.selector: ${svc.selector ? labelText(svc.selector) : '(none)'}`);
  if (svc.externalIPs.length > 0) out.push(`spec.externalIPs: ${svc.externalIPs.join(', ')}`);
  if (svc.loadBalancerIPs.length > 0)
    out.push(`status.loadBalancer.ingress: ${svc.loadBalancerIPs.join(', ')}`);
  if (svc.externalTrafficPolicy === 'Local' && svc.type !== 'ClusterIP')
    out.push('spec.externalTrafficPolicy: Local');
  if (svc.internalTrafficPolicy === 'Local') out.push('spec.internalTrafficPolicy: Local');
  if (svc.sessionAffinity === 'ClientIP')
    out.push(`spec.sessionAffinity: ClientIP (${svc.sessionAffinityTimeout}s)`);
  if (svc.publishNotReadyAddresses) out.push('spec.publishNotReadyAddresses: true');
  return out.map((l) => read(l, `Service ${svc.namespace}/${svc.name}`));
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        prev[j]! + 1,
        row[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = row;
  }
  return prev[b.length]!;
}

/** Services named like the target: the same name elsewhere first, then close spellings. */
export function similarServices(
  services: { namespace: string; name: string }[],
  namespace: string,
  name: string,
): { namespace: string; name: string }[] {
  const limit = Math.max(2, Math.floor(name.length / 3));
  const typed = name.toLowerCase(); // "Nginx-Svc" means nginx-svc: names are lower case
  return services
    .filter((s) => !(s.namespace === namespace && s.name === name))
    .map((s) => ({
      s,
      d:
        s.name === typed
          ? 0
          : s.name.includes(typed) || typed.includes(s.name)
            ? 1
            : distance(s.name, typed),
    }))
    .filter((x) => x.d <= limit)
    .sort(
      (a, b) =>
        a.d - b.d || Number(a.s.namespace !== namespace) - Number(b.s.namespace !== namespace),
    )
    .slice(0, 3)
    .map((x) => x.s);
}

/** A Service's name is a DNS-1035 label: the API server accepts no other, so no capture is needed
 * to know that a Service of any other name does not exist. */
export const SERVICE_NAME = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

/** What the snapshot holds, when the target is not in the facts and they do not list its
 * namespace's Services whole (a snapshot of another Service): not read, rather than missing. The
 * API's own answer that it is not there (a live run's suggestions) is no such case. */
function snapshotHolds(ctx: CheckContext): string | undefined {
  if (ctx.service || ctx.options.suggestions !== undefined) return undefined;
  if (!SERVICE_NAME.test(ctx.target.service)) return undefined;
  const scope = serviceListScope(ctx.facts);
  if (listedWhole(scope, ctx.target.namespace)) return undefined;
  const { service: held, namespace: heldNs } = ctx.facts.meta;
  if (scope.kind === 'namespace') return `lists the Services of namespace ${scope.namespace} only`;
  return typeof held === 'string'
    ? `was taken for ${typeof heldNs === 'string' ? `${heldNs}/` : ''}${held} and read only the Services it needed, by name`
    : "lists no namespace's Services whole";
}

/** The target as a read the run could not make, when the snapshot does not hold it. */
export function targetNotCaptured(ctx: CheckContext): NotRead | undefined {
  const holds = snapshotHolds(ctx);
  const { namespace, service } = ctx.target;
  return holds
    ? { what: `Service ${namespace}/${service}`, why: `not captured: this snapshot ${holds}` }
    : undefined;
}

function notCaptured(ctx: CheckContext, holds: string): Finding {
  const { namespace, service } = ctx.target;
  // only the Services the snapshot holds: it says nothing of any other
  const held = similarServices(ctx.view.services, namespace, service)[0];
  return finding(
    'service-not-captured',
    'skip',
    `Service ${namespace}/${service} was not captured`,
    {
      explanation: `This snapshot ${holds}: whether ${namespace}/${service} exists is not known here, and no later step can look at it.${held ? ` It holds ${held.namespace}/${held.name}.` : ''}`,
      evidence: [unseen(`Service ${namespace}/${service}: not in this snapshot, which ${holds}`)],
      next: held
        ? kdebug(['svc', valid.name(held.name), '-n', valid.namespace(held.namespace)])
        : kubectl(namespace, 'get', 'service', valid.name(service)),
    },
  );
}

function notFound(ctx: CheckContext): Finding {
  const holds = snapshotHolds(ctx);
  if (holds) return notCaptured(ctx, holds);
  const { namespace, service } = ctx.target;
  const suggestions =
    ctx.options.suggestions ?? similarServices(ctx.view.services, namespace, service);
  const phrase = (s: { namespace: string; name: string }) =>
    s.namespace === namespace ? `"${s.name}"` : `"${s.name}" in namespace ${s.namespace}`;
  const first = suggestions[0];
  return finding('service-not-found', 'fail', `Service ${namespace}/${service} does not exist`, {
    explanation:
      suggestions.length > 0
        ? `There is no Service "${service}" in namespace ${namespace}${SERVICE_NAME.test(service) ? '' : " (nor can there be: a Service's name is lowercase letters, digits and '-', starting with a letter)"}. Did you mean ${list(suggestions.map(phrase), 'or')}? A client that uses the name gets NXDOMAIN from cluster DNS.`
        : `There is no Service "${service}" in namespace ${namespace}, and no Service with a similar name${ctx.view.services.length === 0 ? ' was read' : ''}. A client that uses the name gets NXDOMAIN from cluster DNS: create the Service, or check the namespace.`,
    evidence: [
      read(
        `${count(ctx.view.services.length, 'Service')} read, in ${count(new Set(ctx.view.services.map((s) => s.namespace)).size, 'namespace')}`,
      ),
      ...suggestions.map((s) => read(`similar: ${s.namespace}/${s.name}`)),
    ],
    next: first
      ? kdebug(['svc', valid.name(first.name), '-n', valid.namespace(first.namespace)])
      : kubectl(undefined, 'get', 'services', '-A'),
  });
}

/** `NAME:PORT` for a port the Service does not have: what a client of that port meets. */
function noSuchPort(svc: Service, port: string): Finding {
  const by = /^\d+$/.test(port) ? 'port' : 'port named';
  const ports = svc.ports.map((p) => `${p.name ? `${p.name} ` : ''}${p.port}/${p.protocol}`);
  return finding(
    'service-port-not-found',
    'fail',
    `${svc.namespace}/${svc.name} has no ${by} ${port}`,
    {
      explanation: `The Service's ports are ${ports.join(', ') || 'none'}. ${by === 'port' ? `A client connecting to its cluster IP on port ${port} reaches no rule: kube-proxy writes one per Service port, so the connection is refused or times out.` : `Only a Service port's name (spec.ports[].name) narrows the diagnosis; a Pod's port names are targetPorts.`} The steps below are about every port.`,
      evidence: serviceEvidence(svc),
      next: kubectl(svc.namespace, 'get', 'service', valid.name(svc.name), '-o', 'yaml'),
    },
  );
}

function describe(svc: Service): Finding {
  const evidence = serviceEvidence(svc);
  const ref = `${svc.namespace}/${svc.name}`;
  if (svc.type === 'ExternalName') {
    const target = svc.externalName ?? '';
    const isIp = /^\d+\.\d+\.\d+\.\d+$|:/.test(target);
    return finding(
      isIp ? 'external-name-is-ip' : 'service-external-name',
      isIp ? 'fail' : 'pass',
      isIp
        ? `ExternalName ${target} is an IP address, not a DNS name`
        : `ExternalName: an alias for ${target}`,
      {
        explanation: isIp
          ? `An ExternalName Service is only a DNS CNAME, and a CNAME must name a host: cluster DNS answers with a CNAME record "${target}", which clients cannot resolve. For a fixed IP use a Service without a selector and an EndpointSlice holding that IP.`
          : `${ref} has no ClusterIP, no endpoints and no kube-proxy rules: cluster DNS answers its name with a CNAME to ${target}, and the client resolves and connects to ${target} itself. The Service's ports are not used. What matters is that ${target} resolves from inside the cluster and accepts the connection.`,
        evidence,
        info: !isIp,
        next: isIp
          ? kubectl(svc.namespace, 'get', 'service', valid.name(svc.name), '-o', 'yaml')
          : undefined,
      },
    );
  }
  if (svc.headless)
    return finding(
      'service-headless',
      'pass',
      'headless Service (clusterIP: None): no virtual IP',
      {
        explanation: `${ref} has no ClusterIP, so kube-proxy writes no rules for it and there is nothing to load-balance: its DNS name answers with the IP of every ready Pod, and clients connect to a Pod directly${svc.ports.length > 0 ? ' on the targetPort' : ''}.`,
        evidence,
        info: true,
      },
    );
  const ports = svc.ports.map((p) => `${p.port}/${p.protocol}`);
  const where = [
    `ClusterIP ${svc.clusterIP}${ports.length === 1 ? `:${ports[0]}` : ` ${ports.join(', ')}`}`,
  ];
  const nps = svc.ports.map((p) => p.nodePort).filter(Boolean);
  if (nps.length > 0) where.push(`node port ${nps.join(', ')}`);
  return finding(
    'service-found',
    'pass',
    `${svc.type === 'ClusterIP' ? '' : `${svc.type}: `}${where.join(', ')}`,
    { explanation: `${ref} exists.`, evidence },
  );
}

export const serviceCheck: Check<'service'> = {
  id: 'service',
  title: 'Service',
  run(ctx) {
    if (!ctx.service && ctx.waiting('objects')) return pending('reading the Service');
    if (!ctx.service) return [notFound(ctx)];
    const port = ctx.target.port;
    if (port !== undefined && portsNamed(ctx.service, port).length === 0)
      return [noSuchPort(ctx.service, port), describe(ctx.service)];
    return [describe(ctx.service)];
  },
};
