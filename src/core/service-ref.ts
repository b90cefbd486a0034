// The forms people type for a Service, as kubectl and cluster DNS spell it.

export interface ServiceRef {
  /** Absent when the argument names none: -n or the context's namespace applies. */
  namespace?: string;
  name: string;
}

/** `NAME`, `NS/NAME`, `svc/NAME` (`service/`, `services/`), `NAME.NS`, `NAME.NS.svc[.DOMAIN]`. */
export function parseServiceRef(arg: string): ServiceRef | { error: string } {
  let rest = arg.trim();
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
  return namespace === undefined ? { name: rest } : { namespace, name: rest };
}
