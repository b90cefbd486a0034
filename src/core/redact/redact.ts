// A snapshot made to be attached to a ticket: of each object only the fields the diagnosis reads
// (the allowlist in fields.ts), objects of other kinds dropped, and the context, user and
// server in meta.json replaced by hashes salted per snapshot; meta.json says what was kept and
// what was taken out, never a value.
import { hash, randomBytes } from 'node:crypto';
import { isCiliumAgentPod } from '../dataplane/cilium/agent/agent.js';
import { flattenObjects, isKubeProxyPod, kubeProxyMounts, toPod } from '../kube/objects.js';
import type { Facts, KubeObject, SnapshotMeta } from '../model.js';
import { ruleFor, RULES, type RuleContext } from './fields.js';
import { isObj, keptPaths, prune } from './prune.js';

/** Something taken out, how many times, and for fields the paths (schema names, not values). */
export interface Removed {
  what: string;
  count: number;
  fields?: string[];
}

/** What a redaction kept and took out (written to meta.json). */
export interface Redaction {
  redacted: true;
  /** Per rule (a kind, or some objects of a kind): the paths kept; every other field was dropped. */
  kept: Record<string, string[]>;
  removed: Removed[];
}

export interface RedactOptions {
  /** What the hashes are salted with. Default: 16 random bytes, stored nowhere, so a reader
   * cannot try the likely names of a context or a server against a hash. */
  salt?: string;
}

/** The stand-in for a name: the same within one snapshot (salt), unguessable without the salt. */
export const saltedHash = (salt: string, text: string) =>
  `sha256:${hash('sha256', `${salt}\0${text}`).slice(0, 16)}`;

const KEPT: Record<string, string[]> = Object.fromEntries(
  RULES.map((r) => [r.name, keptPaths(r.keep)]),
);

/** The Facts with only what the diagnosis reads (the input is not changed), and what was taken. */
export function redactFacts(
  facts: Facts,
  o: RedactOptions = {},
): { facts: Facts; redaction: Redaction } {
  const objects = redactObjects(flattenObjects(facts.objects));
  const meta = redactMeta(facts.meta, o.salt ?? randomBytes(16).toString('hex'));
  const redaction: Redaction = {
    redacted: true,
    kept: KEPT,
    removed: [...objects.removed, ...meta.removed],
  };
  return {
    facts: { objects: objects.kept, nodes: facts.nodes, meta: { ...meta.meta, redaction } },
    redaction,
  };
}

/** kubeProxyConfigOf reads one of these when no kube-proxy Pod names the ConfigMap it mounts. */
const PROXY_CONFIG_NAMES = ['kube-proxy', 'kube-proxy-config'];

function ruleContext(objects: KubeObject[]): RuleContext {
  const pods = objects.filter((o) => o.kind === 'Pod').map(toPod);
  const proxyPods = pods.filter(isKubeProxyPod);
  const raw = new Set(proxyPods.map((p) => p.raw));
  const agents = new Set(pods.filter(isCiliumAgentPod).map((p) => p.raw));
  const mounted = kubeProxyMounts({ pods: proxyPods });
  return {
    isKubeProxyPod: (o) => raw.has(o),
    isCiliumAgentPod: (o) => agents.has(o),
    isKubeProxyConfig: (o) => {
      const name = o.metadata?.name ?? '';
      return (
        o.metadata?.namespace === 'kube-system' &&
        (mounted.has(name) || PROXY_CONFIG_NAMES.includes(name))
      );
    },
  };
}

const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);

function redactObjects(objects: KubeObject[]): { kept: KubeObject[]; removed: Removed[] } {
  const context = ruleContext(objects);
  const dropped = new Map<string, Map<string, number>>();
  const kinds = new Map<string, number>();
  const kept: KubeObject[] = [];
  for (const o of objects) {
    const rule = ruleFor(o, context);
    if (!rule) {
      bump(kinds, o.kind || '(no kind)');
      continue;
    }
    const paths = dropped.get(rule.name) ?? new Map<string, number>();
    dropped.set(rule.name, paths);
    kept.push(prune(o, rule.keep, '', (p) => bump(paths, p)) as KubeObject);
  }
  const removed: Removed[] = [...dropped]
    .filter(([, paths]) => paths.size > 0)
    .map(([name, paths]) => ({
      what: `${name}: fields kdebug does not read`,
      count: [...paths.values()].reduce((a, b) => a + b, 0),
      fields: [...paths.keys()].sort(),
    }));
  for (const [kind, count] of kinds)
    removed.push({ what: `${kind} objects (a kind kdebug does not read)`, count });
  return { kept, removed };
}

const HIDDEN = ['context', 'user', 'server'] as const;

/** kdebug's own identifiers in meta (a read, a node, a namespace): the checks match them, and a
 * context or user named like a namespace ("default") must not change them. */
const IDENTIFIERS = new Set([
  'namespace',
  'service',
  'what',
  'node',
  'nodes',
  'command',
  'commands',
  'kubeProxyPodsReadOn',
]);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** `text` where it stands alone: "prod" is hidden in `context "prod"`, not in "production". */
const alone = (text: string) => new RegExp(`(?<![\\w-])${escape(text)}(?![\\w-]|\\.\\w)`, 'g');

/** The ways a message names the server: its URL, host:port, and host. */
function serverForms(server: string): string[] {
  try {
    const u = new URL(server);
    return [...new Set([server, u.host, u.hostname])].filter((x) => x !== '');
  } catch {
    return [server];
  }
}

function redactMeta(meta: SnapshotMeta, salt: string): { meta: SnapshotMeta; removed: Removed[] } {
  const out: SnapshotMeta = {};
  const removed: Removed[] = [];
  const hidden: [string, string][] = [];
  for (const key of HIDDEN) {
    const v = meta[key];
    if (typeof v !== 'string' || v === '') continue;
    const h = saltedHash(salt, v);
    out[key] = h;
    removed.push({ what: `meta.json ${key} (replaced by a salted hash)`, count: 1 });
    for (const form of key === 'server' ? serverForms(v) : [v]) hidden.push([form, h]);
  }
  // the longest first: a URL before the host inside it
  const pairs = hidden
    .sort(([a], [b]) => b.length - a.length)
    .map(([form, h]) => [alone(form), h] as const);
  let replaced = 0;
  const scrub = (v: unknown, key: string): unknown => {
    if (typeof v === 'string' && !IDENTIFIERS.has(key))
      return pairs.reduce(
        (s, [re, h]) =>
          s.replace(re, () => {
            replaced++;
            return h;
          }),
        v,
      );
    if (Array.isArray(v)) return v.map((x) => scrub(x, key));
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x, k)]));
    return v;
  };
  for (const [k, v] of Object.entries(meta)) if (!(k in out)) out[k] = scrub(v, k);
  if (replaced > 0)
    removed.push({
      what: 'the server, context and user where meta.json messages name them (replaced by their hash)',
      count: replaced,
    });
  return { meta: out, removed };
}
