// The forms people type for a Service, as kubectl and cluster DNS spell it.
import { canonicalAddress, familyOf } from '../ipv6.js';
import type { Service, ServicePort } from './objects.js';

export interface ServiceRef {
  /** Absent when the argument names none: -n or the context's namespace applies. */
  namespace?: string;
  name: string;
  /** One of its ports, by number or name (`NAME:8080`, `NAME:http`): the diagnosis of it alone. */
  port?: string;
}

/** A port number, or a port's name as the API allows it (IANA_SVC_NAME: a letter somewhere). */
const PORT = /^(?:\d{1,5}|(?=[a-z0-9-]*[a-z])[a-z0-9](?:[a-z0-9-]{0,13}[a-z0-9])?)$/;

/** `NAME`, `NS/NAME`, `svc/NAME` (`service/`, `services/`), `NAME.NS`, `NAME.NS.svc[.DOMAIN]`,
 * each with `:PORT` or `:PORTNAME` after it. */
export function parseServiceRef(arg: string): ServiceRef | { error: string } {
  let rest = arg.trim();
  const colon = rest.split(':');
  if (colon.length > 2 || (colon.length === 2 && !PORT.test(colon[1]!)))
    return { error: `"${arg}" is not NAME:PORT (a port number or a port's name after the colon)` };
  const port = colon[1];
  rest = colon[0]!;
  const kind = /^(?:svc|service|services)\//i.exec(rest);
  if (kind) rest = rest.slice(kind[0].length);
  let namespace: string | undefined;
  const slash = rest.split('/');
  if (slash.length === 2 && !kind) [namespace, rest] = slash as [string, string];
  else if (slash.length > 1) return { error: `"${arg}" is not NAME, NS/NAME or svc/NAME` };
  // a Service name has no dots: a dotted name is its DNS name, NAME.NS[.svc[.cluster.local]]
  const dots = rest.split('.');
  if (dots.length > 1) {
    if (namespace !== undefined || (dots.length > 2 && dots[2] !== 'svc'))
      return { error: `"${arg}" is not a Service's DNS name (NAME.NS.svc.cluster.local)` };
    [rest, namespace] = dots as [string, string];
  }
  if (!rest || namespace === '') return { error: `"${arg}" names no Service` };
  return {
    ...(namespace !== undefined ? { namespace } : {}),
    name: rest,
    ...(port !== undefined ? { port } : {}),
  };
}

/** The Service as `NAME:PORT` diagnoses it: those ports alone; whole where it has none such
 * (the Service step says so) or no port was named. */
export function narrowed(svc: Service | undefined, port: string | undefined): Service | undefined {
  const ports = svc && port !== undefined ? portsNamed(svc, port) : [];
  return svc && ports.length > 0 ? { ...svc, ports } : svc;
}

/** The Service's ports a `:PORT` names: by number (TCP and UDP alike, as DNS's 53) or by name. */
export function portsNamed(svc: Pick<Service, 'ports'>, port: string): ServicePort[] {
  return svc.ports.filter((p) => (/^\d+$/.test(port) ? p.port === Number(port) : p.name === port));
}

/** A Service's address as an application logs it: its cluster IP, IP:PORT or [IPv6]:PORT (a
 * port's name too, as NAME:PORTNAME takes it). */
export function parseServiceAddress(arg: string): { ip: string; port?: string } | undefined {
  const t = arg.trim();
  const m =
    /^\[([0-9a-fA-F:.]+)\](?::([^:]+))?$/.exec(t) ??
    /^(\d{1,3}(?:\.\d{1,3}){3})(?::([^:]+))?$/.exec(t) ??
    /^([0-9a-fA-F]*:[0-9a-fA-F:.]*)()$/.exec(t);
  if (!m || familyOf(m[1]!) === undefined) return undefined;
  const port = m[2] || undefined;
  if (port !== undefined && !PORT.test(port)) return undefined;
  return { ip: canonicalAddress(m[1]!), ...(port !== undefined ? { port } : {}) };
}

/** The one Service of that name in any namespace (`-A`, as kubectl's): none or several is an
 * error that says which namespaces hold it (`namespaces`, for a list to pick from). */
export function serviceNamed(
  services: Service[],
  name: string,
  where: string,
): ServiceRef | { error: string; namespaces: string[] } {
  const found = services.filter((s) => s.name === name);
  if (found.length === 1) return { namespace: found[0]!.namespace, name };
  const namespaces = found.map((s) => s.namespace);
  return {
    error:
      found.length === 0
        ? `no Service named ${name} in any namespace of ${where}`
        : `Service ${name} is in ${found.length} namespaces (${namespaces.join(', ')}): give one with -n`,
    namespaces,
  };
}

/** What a typed Service names among those listed while `namespace` is shown (none: every one):
 * an address or NS/NAME as `kdebug svc` takes them; a bare NAME in that namespace when it holds
 * one, else wherever -A finds it (else the name, and the namespaces holding it: none or several). */
export function findService(
  services: Service[],
  arg: string,
  namespace: string | undefined,
  where: string,
): ServiceRef | { error: string } | { error: string; ref: ServiceRef; namespaces: string[] } {
  const at = parseServiceAddress(arg);
  if (at) return serviceAt(services, arg, at, where);
  const ref = parseServiceRef(arg);
  if ('error' in ref || ref.namespace !== undefined) return ref;
  if (services.some((s) => s.namespace === namespace && s.name === ref.name))
    return { namespace, ...ref };
  const named = serviceNamed(services, ref.name, where);
  return 'error' in named ? { ...named, ref } : { ...ref, ...named };
}

/** The Service whose cluster IP this is, or why none is chosen (one line, the input named). */
export function serviceAt(
  services: Service[],
  arg: string,
  at: { ip: string; port?: string },
  where: string,
): ServiceRef | { error: string } {
  const found = services.filter((s) => s.clusterIPs.some((ip) => canonicalAddress(ip) === at.ip));
  if (found.length !== 1)
    return {
      error:
        found.length === 0
          ? `${arg}: no Service in ${where} has cluster IP ${at.ip}`
          : `${arg}: ${found.length} Services have cluster IP ${at.ip} (${found.map((s) => `${s.namespace}/${s.name}`).join(', ')}): name one`,
    };
  // a port it lacks fails the Service step, as NAME:PORT's does
  const s = found[0]!;
  return {
    namespace: s.namespace,
    name: s.name,
    ...(at.port !== undefined ? { port: at.port } : {}),
  };
}
