// `cilium-dbg service list -o json` (and `service get -o json`'s one object): the agent's REST
// model of each Service, its realized state first.
import {
  CiliumParseError,
  backendState,
  frontendType,
  type CiliumBackend,
  type CiliumFrontend,
  type CiliumTable,
} from '../listing.js';
import { isRecord, jsonValue } from '../json-value.js';
import { fail } from '../row-walk.js';

interface JsonBackend {
  ip?: string;
  port?: number;
  protocol?: string;
  state?: string;
  weight?: number;
  nodeName?: string;
  preferred?: boolean;
}
interface JsonSpec {
  id?: number;
  'frontend-address'?: { ip?: string; port?: number; protocol?: string; scope?: string };
  'backend-addresses'?: JsonBackend[];
  flags?: { type?: string; name?: string; namespace?: string };
}

/** `cilium-dbg service list -o json`: the agent's API objects, realized state first. */
export function serviceListJson(text: string, source: string): CiliumTable {
  type Item = { spec?: JsonSpec; status?: { realized?: JsonSpec } };
  // `service get -o json` prints one object, `service list -o json` a list; a prompt may come
  // before it ("[root@host ~]# ...", itself starting with a bracket) and after it
  // the REST model's objects: a spec (or a status's realized one) with its address or its id
  const model = (s: unknown) => isRecord(s) && ('frontend-address' in s || 'id' in s);
  const service = (v: unknown) =>
    isRecord(v) && (model(v['spec']) || (isRecord(v['status']) && model(v['status']['realized'])));
  const json = jsonValue(text, (v) => service(v) || (Array.isArray(v) && v.every(service)));
  if ('error' in json)
    throw new CiliumParseError(
      source,
      json.line,
      `not the JSON of cilium-dbg service list -o json: ${json.error}`,
    );
  const items = (Array.isArray(json.value) ? json.value : [json.value]) as Item[];
  const line = json.line;
  const frontends = items.map((item, i): CiliumFrontend => {
    const spec = item.status?.realized ?? item.spec ?? {};
    const fe = spec['frontend-address'] ?? {};
    const flags = item.spec?.flags ?? spec.flags ?? {};
    if (!fe.ip)
      fail(source, line, `Service ${i + 1} of service list -o json has no frontend address`);
    const protocol = fe.protocol?.toLowerCase();
    const backends = spec['backend-addresses'] ?? [];
    return {
      ip: fe.ip!,
      port: fe.port ?? 0,
      ...(spec.id !== undefined ? { id: spec.id } : {}),
      ...(protocol && protocol !== 'none'
        ? { protocol: protocol as CiliumFrontend['protocol'] }
        : {}),
      type: frontendType(flags.type),
      ...(flags.name ? { service: `${flags.namespace ?? ''}/${flags.name}` } : {}),
      // the REST model's scope is "external" or "internal" (models.FrontendAddressScope*)
      ...(fe.scope === 'internal' || fe.scope === 'i' ? { internal: true } : {}),
      flags: [],
      backends: backends.map((b) => ({
        ip: b.ip ?? '',
        port: b.port ?? 0,
        ...(b.protocol ? { protocol: b.protocol.toLowerCase() as CiliumBackend['protocol'] } : {}),
        ...(backendState(b.state) ? { state: backendState(b.state) } : {}),
        ...(b.weight !== undefined ? { weight: b.weight } : {}),
        ...(b.nodeName ? { nodeName: b.nodeName } : {}),
        ...(b.preferred ? { preferred: true } : {}),
        line,
      })),
      line,
    };
  });
  return { form: 'service-list-json', source, frontends };
}
