// What a redacted snapshot keeps of kube-proxy's own settings: the flags of its Pod's command line
// and the fields of the KubeProxyConfiguration in its ConfigMap that kdebug reads.
import { dump, load } from 'js-yaml';
import { isObj, keptPaths, prune, Rewrite, S, each, type Fields, type J } from './prune.js';

/** The kube-proxy flags with a value kube/objects/kube-proxy-config.ts's proxyFlags reads: the
 * rest of its command line is dropped. */
const VALUE_FLAGS = [
  'proxy-mode',
  'cluster-cidr',
  'detect-local-mode',
  'ipvs-scheduler',
  'iptables-masquerade-bit',
  'feature-gates',
];

/** A feature gate set on or off ("Name=true"): what the flag's gates are read as. */
const GATE = /^[A-Za-z0-9]+=(?:true|false)$/;

/** A flag's value as kept: of --feature-gates only its gates, no other text. */
const valueKept = (flag: string, v: string) =>
  flag === 'feature-gates'
    ? v
        .split(',')
        .filter((g) => GATE.test(g))
        .join(',')
    : v;

/** Read as on or off: the word after it is not its value, and "=false" reads as its absence. */
const MASQUERADE_ALL = '--masquerade-all';

/** The words of a command line that set a flag kdebug reads ("--proxy-mode=ipvs", or the flag and
 * its value as two words). */
function proxyFlagWords(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: string[] = [];
  for (let i = 0; i < v.length; i++) {
    const w: unknown = v[i];
    if (typeof w !== 'string') continue;
    if (w === MASQUERADE_ALL || w === `${MASQUERADE_ALL}=true`) out.push(MASQUERADE_ALL);
    const flag = VALUE_FLAGS.find((f) => w === `--${f}` || w.startsWith(`--${f}=`));
    if (!flag) continue;
    const next: unknown = v[i + 1];
    if (w === `--${flag}` && typeof next === 'string' && !next.startsWith('-')) {
      out.push(w, valueKept(flag, next));
      i++;
    } else
      out.push(w === `--${flag}` ? w : `--${flag}=${valueKept(flag, w.slice(flag.length + 3))}`);
  }
  return out;
}

export const FLAGS = new Rewrite(
  `only the flags kdebug reads: ${[...VALUE_FLAGS.map((f) => `--${f}`), MASQUERADE_ALL].join(', ')}`,
  proxyFlagWords,
);
/** The fields of a KubeProxyConfiguration that kube/objects/kube-proxy-config.ts's configFrom
 * reads. */
const PROXY_CONFIG: Fields = {
  apiVersion: S,
  kind: S,
  mode: S,
  clusterCIDR: S,
  detectLocalMode: S,
  detectLocal: { bridgeInterface: S, interfaceNamePrefix: S },
  iptables: { masqueradeAll: S, masqueradeBit: S, localhostNodePorts: S },
  nftables: { masqueradeAll: S, masqueradeBit: S },
  ipvs: { scheduler: S },
  nodePortAddresses: each(S),
  featureGates: new Rewrite('each gate set on or off', (v) =>
    isObj(v)
      ? Object.fromEntries(Object.entries(v).filter(([k, x]) => GATE.test(`${k}=${String(x)}`)))
      : undefined,
  ),
};

/** Stands in for a configuration that is not YAML: still not YAML, so the replay says so too. */
const NOT_YAML = '{ kdebug redacted this value: it was not valid YAML';

/** The configuration file cut to the fields read, as YAML. */
function proxyConfigText(text: string): string {
  let doc: unknown;
  try {
    doc = load(text);
  } catch {
    return NOT_YAML;
  }
  const kept = prune(doc, PROXY_CONFIG);
  return kept === undefined ? '' : dump(kept);
}

/** The key kube/objects/kube-proxy-config.ts reads kube-proxy's configuration from; never a
 * kubeconfig (it holds the server, and may hold a token). */
function proxyConfigKey(data: J): string | undefined {
  if (typeof data['config.conf'] === 'string') return 'config.conf';
  return Object.keys(data).find(
    (k) => /conf/.test(k) && !/kubeconfig/i.test(k) && typeof data[k] === 'string',
  );
}

export const PROXY_CONFIG_DATA = new Rewrite(
  `the configuration key (config.conf, else the first key named *conf* that is not a kubeconfig), cut to ${keptPaths(PROXY_CONFIG).join(', ')}`,
  (v) => {
    if (!isObj(v)) return undefined;
    const key = proxyConfigKey(v);
    return key ? { [key]: proxyConfigText(v[key] as string) } : {};
  },
);
