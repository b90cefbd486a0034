// A snapshot made to be attached to a ticket: what the diagnosis never reads and a reader should
// not see (env values, secret-looking arguments, object dumps in annotations, managedFields,
// ConfigMap data, the server URL) taken out, and a list of what was taken, never of the values.
import { hash } from 'node:crypto';
import { clusterView, kubeProxyMounts } from './kube.js';
import type { Facts, KubeObject, SnapshotMeta } from './model.js';

/** Every string inside `v` with each [from, to] replaced. */
function replaceStrings(v: unknown, pairs: [string, string][]): unknown {
  if (pairs.length === 0) return v;
  if (typeof v === 'string') return pairs.reduce((s, [a, b]) => s.replaceAll(a, b), v);
  if (Array.isArray(v)) return v.map((x) => replaceStrings(x, pairs));
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, replaceStrings(x, pairs)]));
  return v;
}

/** What a redaction took out, by kind, with how many of each (written to meta.json). */
export interface Redaction {
  redacted: true;
  removed: { what: string; count: number }[];
}

const REDACTED = '(redacted)';

/** Annotations that hold a whole object (kubectl apply's, Helm's and others' dumps). */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** A command-line argument whose name says it carries a secret: --token=..., --db-password ... */
const SECRET_FLAG =
  /^(--?[\w.-]*(?:token|password|passwd|secret|credential|api-?key|private-key|auth-key)[\w.-]*)(=(.*))?$/i;

/** The ConfigMap data the checks read, kept: kube-proxy's configuration (every key of its
 * ConfigMap), the cluster domain in CoreDNS's Corefile, Cilium's kube-proxy-replacement. */
const KEPT_DATA: { namespace?: string; name: string; keys?: string[] }[] = [
  { namespace: 'kube-system', name: 'kube-proxy' },
  { namespace: 'kube-system', name: 'kube-proxy-config' },
  { namespace: 'kube-system', name: 'coredns', keys: ['Corefile'] },
  { name: 'cilium-config', keys: ['kube-proxy-replacement'] },
];

type J = Record<string, unknown>;
const isObj = (v: unknown): v is J => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The stable stand-in for a value that must not be shown but may be compared. */
export const stableHash = (text: string) => `sha256:${hash('sha256', text).slice(0, 16)}`;

/** The Facts with their secrets taken out (the input is not changed), and what was taken. */
export function redactFacts(facts: Facts): { facts: Facts; redaction: Redaction } {
  const counts = new Map<string, number>();
  const took = (what: string, n = 1) => {
    if (n > 0) counts.set(what, (counts.get(what) ?? 0) + n);
  };
  const mounted = kubeProxyMounts(clusterView(facts.objects));
  const objects = facts.objects.map((o) => redactObject(structuredClone(o), mounted, took));
  const meta: SnapshotMeta = { ...facts.meta };
  const hidden: [string, string][] = [];
  for (const key of ['server', 'user'] as const) {
    const v = meta[key];
    if (typeof v === 'string' && v !== '') {
      meta[key] = stableHash(v);
      took(`meta.json ${key} (replaced by its hash)`);
      hidden.push(
        key === 'server' ? [v, stableHash(v)] : [`user "${v}"`, `user "${stableHash(v)}"`],
      );
    }
  }
  // the errors a capture recorded name the server and the user too
  for (const [k, v] of Object.entries(meta))
    if (k !== 'server' && k !== 'user') meta[k] = replaceStrings(v, hidden);
  const redaction: Redaction = {
    redacted: true,
    removed: [...counts].map(([what, count]) => ({ what, count })),
  };
  return { facts: { objects, nodes: facts.nodes, meta: { ...meta, redaction } }, redaction };
}

function redactObject(
  o: KubeObject,
  mounted: Set<string>,
  took: (what: string, n?: number) => void,
): KubeObject {
  const md = o.metadata as J | undefined;
  if (md) {
    if ('managedFields' in md) {
      delete md['managedFields'];
      took('metadata.managedFields');
    }
    const ann = md['annotations'];
    if (isObj(ann))
      for (const [k, v] of Object.entries(ann))
        if (k === LAST_APPLIED || (typeof v === 'string' && holdsObject(v))) {
          delete ann[k];
          took('annotations holding an object dump');
        }
  }
  const spec = o['spec'];
  if (isObj(spec)) {
    redactPodSpec(spec, took);
    const template = spec['template'];
    if (isObj(template) && isObj(template['spec'])) redactPodSpec(template['spec'], took);
  }
  if (o.kind === 'ConfigMap') redactConfigMap(o, mounted, took);
  if (o.kind === 'Secret')
    for (const k of ['data', 'stringData'])
      if (k in o) {
        delete o[k];
        took('Secret data');
      }
  return o;
}

/** A value that is a JSON object or array: an object written into an annotation. */
function holdsObject(v: string): boolean {
  const t = v.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return false;
  try {
    return typeof JSON.parse(t) === 'object';
  } catch {
    return false;
  }
}

function redactPodSpec(spec: J, took: (what: string, n?: number) => void): void {
  if ('imagePullSecrets' in spec) {
    delete spec['imagePullSecrets'];
    took('imagePullSecrets');
  }
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    const cs = spec[list];
    if (!Array.isArray(cs)) continue;
    for (const c of cs.filter(isObj)) {
      if (Array.isArray(c['env']))
        for (const e of c['env'].filter(isObj))
          if ('value' in e) {
            e['value'] = REDACTED;
            took('container env values (names kept)');
          }
      if ('envFrom' in c) {
        delete c['envFrom'];
        took('container envFrom');
      }
      for (const k of ['command', 'args'])
        if (Array.isArray(c[k])) took('secret-looking arguments', redactArgs(c[k] as unknown[]));
    }
  }
}

/** Replaces the values of secret-looking flags in place; returns how many. */
function redactArgs(args: unknown[]): number {
  let n = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (typeof a !== 'string') continue;
    const m = SECRET_FLAG.exec(a);
    if (!m) continue;
    if (m[2] !== undefined) {
      args[i] = `${m[1]}=${REDACTED}`;
      n++;
    } else if (typeof args[i + 1] === 'string' && !(args[i + 1] as string).startsWith('-')) {
      args[++i] = REDACTED; // "--token VALUE"
      n++;
    }
  }
  return n;
}

function redactConfigMap(
  o: KubeObject,
  mounted: Set<string>,
  took: (what: string, n?: number) => void,
): void {
  const ns = o.metadata?.namespace;
  const name = o.metadata?.name ?? '';
  const kept =
    KEPT_DATA.find((k) => k.name === name && (k.namespace === undefined || k.namespace === ns)) ??
    (ns === 'kube-system' && mounted.has(name) ? { name } : undefined);
  const data = o['data'];
  if (isObj(data))
    for (const k of Object.keys(data))
      if (!kept || (kept.keys && !kept.keys.includes(k))) {
        data[k] = REDACTED;
        took('ConfigMap data values (keys kept)');
      }
  if ('binaryData' in o) {
    delete o['binaryData'];
    took('ConfigMap binaryData');
  }
}
