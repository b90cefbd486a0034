// Kubeconfig loading the way kubectl does it, which client-node's loadFromDefault does not:
// every KUBECONFIG file merged in order, the first definition of a name wins, missing files are
// skipped, current-context comes from the first file that sets one; and with no kubeconfig at
// all we say so instead of falling back to http://localhost:8080.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import type {
  Cluster as KcCluster,
  Context as KcContext,
  KubeConfig,
  User as KcUser,
} from '@kubernetes/client-node';
import type * as ClientNodeModule from '@kubernetes/client-node';
import { KubeApiError } from './errors.js';

export interface KubeconfigOptions {
  /** --kubeconfig: this file only. */
  kubeconfig?: string;
  /** --context: instead of current-context. */
  context?: string;
  /** KUBECONFIG, HOME, KUBERNETES_SERVICE_HOST/PORT are read from here. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where the in-cluster service account lives; a prefix for tests. */
  serviceAccountRoot?: string;
}

export interface LoadedKubeconfig {
  kc: KubeConfig;
  context: string;
  cluster: string;
  server: string;
  user: string;
  /** The context's namespace, the default for -n; "default" when it sets none. */
  namespace: string;
  /** The kubeconfig files read, in order (empty in-cluster). */
  files: string[];
  /** The exec credential plugin of the user, for error messages. */
  execPlugin?: string;
}

type ClientNode = typeof ClientNodeModule;

interface Parsed {
  clusters: KcCluster[];
  users: KcUser[];
  contexts: KcContext[];
  currentContext?: string;
}

const configError = (message: string) => new KubeApiError('kubeconfig', message);

/** The files kubectl would read, in order, or the reason there are none. */
function kubeconfigFiles(o: KubeconfigOptions, env: NodeJS.ProcessEnv): string[] {
  if (o.kubeconfig) {
    const file = resolve(o.kubeconfig);
    if (!existsSync(file)) throw configError(`kubeconfig ${o.kubeconfig}: no such file`);
    return [file];
  }
  if (env['KUBECONFIG']) {
    const listed = [
      ...new Set(
        env['KUBECONFIG']
          .split(delimiter)
          .filter(Boolean)
          .map((f) => resolve(f)),
      ),
    ];
    const present = listed.filter((f) => existsSync(f));
    if (present.length === 0) {
      throw new KubeApiError(
        'no-kubeconfig',
        `no kubeconfig: none of the files in KUBECONFIG exist (${listed.join(', ')})`,
      );
    }
    return present;
  }
  const home = env['HOME'] || homedir();
  const file = join(home, '.kube', 'config');
  return existsSync(file) ? [file] : [];
}

function parseFile(k8s: ClientNode, file: string): Parsed {
  let doc: unknown;
  try {
    doc = loadYaml(readFileSync(file, 'utf8'));
  } catch (e) {
    throw configError(`kubeconfig ${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return { clusters: [], users: [], contexts: [] };
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw configError(`kubeconfig ${file}: not a kubeconfig (expected a Config mapping)`);
  // client-node reads token-file at load, relative to the working directory; kubectl reads it relative to the file
  for (const u of ((doc as { users?: unknown }).users as
    { user?: Record<string, unknown> }[] | undefined) ?? []) {
    const tf = u?.user?.['token-file'];
    if (typeof tf === 'string' && !isAbsolute(tf)) u.user!['token-file'] = join(dirname(file), tf);
  }
  const kc = new k8s.KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(doc));
  } catch (e) {
    throw configError(`kubeconfig ${file}: ${(e as Error).message}`);
  }
  kc.makePathsAbsolute(dirname(file));
  return {
    clusters: kc.getClusters(),
    users: kc.getUsers(),
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext() || undefined,
  };
}

/** kubectl's merge: the first file to define a name wins; the first current-context wins. */
function merge(parts: Parsed[]): Parsed {
  const first = <T extends { name: string }>(lists: T[][]) => {
    const seen = new Map<string, T>();
    for (const x of lists.flat()) if (!seen.has(x.name)) seen.set(x.name, x);
    return [...seen.values()];
  };
  return {
    clusters: first(parts.map((p) => p.clusters)),
    users: first(parts.map((p) => p.users)),
    contexts: first(parts.map((p) => p.contexts)),
    currentContext: parts.find((p) => p.currentContext)?.currentContext,
  };
}

/** The in-cluster config kubectl uses inside a Pod: the service account token and CA. */
function inCluster(env: NodeJS.ProcessEnv, root: string): Parsed | undefined {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
  if (!host || !port || !existsSync(join(sa, 'token'))) return undefined;
  const namespaceFile = join(sa, 'namespace');
  const namespace = existsSync(namespaceFile)
    ? readFileSync(namespaceFile, 'utf8').trim()
    : undefined;
  return {
    clusters: [
      {
        name: 'in-cluster',
        server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
        caFile: join(sa, 'ca.crt'),
        skipTLSVerify: false,
      },
    ],
    users: [
      {
        name: 'in-cluster',
        authProvider: { name: 'tokenFile', config: { tokenFile: join(sa, 'token') } },
      },
    ],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', namespace }],
    currentContext: 'in-cluster',
  };
}

const ANONYMOUS = 'kdebug-anonymous';

/** What kubectl (client-go 1.26+) says of the auth providers it removed, in one line. */
const REMOVED_PROVIDERS: Record<string, string> = {
  gcp: 'The gcp auth plugin has been removed. Please use the "gke-gcloud-auth-plugin" kubectl/client-go credential plugin instead. See https://cloud.google.com/blog/products/containers-kubernetes/kubectl-auth-changes-in-gke for further details',
  azure:
    'The azure auth plugin has been removed. Please use the https://github.com/Azure/kubelogin kubectl/client-go credential plugin instead. See https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins for further details',
};

/** The merged kubeconfig kubectl would use (its files, else the in-cluster service account). */
async function readKubeconfig(o: KubeconfigOptions) {
  const env = o.env ?? process.env;
  const k8s = await import('@kubernetes/client-node');
  const files = kubeconfigFiles(o, env);
  const config =
    files.length > 0
      ? merge(files.map((f) => parseFile(k8s, f)))
      : inCluster(env, o.serviceAccountRoot ?? '/');
  return { env, k8s, files, config };
}

/** The context names of the kubeconfig kubectl would use (completion of --context). */
export async function kubeconfigContexts(o: KubeconfigOptions = {}): Promise<string[]> {
  return (await readKubeconfig(o)).config?.contexts.map((c) => c.name) ?? [];
}

/** Loads the kubeconfig kubectl would use and selects the context. Throws KubeApiError. */
export async function loadKubeconfig(o: KubeconfigOptions = {}): Promise<LoadedKubeconfig> {
  const { env, k8s, files, config } = await readKubeconfig(o);
  if (!config) {
    throw new KubeApiError(
      'no-kubeconfig',
      `no kubeconfig: ${join(env['HOME'] || homedir(), '.kube', 'config')} does not exist and neither --kubeconfig nor KUBECONFIG is set`,
    );
  }
  const from = files.length > 0 ? files.join(', ') : 'in-cluster service account';
  const names = config.contexts.map((c) => c.name).join(', ') || 'none';
  const contextName = o.context ?? config.currentContext;
  if (!contextName)
    throw configError(
      `kubeconfig ${from} has no current-context; pass --context (contexts: ${names})`,
    );
  const context = config.contexts.find((c) => c.name === contextName);
  if (!context)
    throw configError(
      `context "${contextName}" not found in kubeconfig ${from} (contexts: ${names})`,
    );
  const cluster = config.clusters.find((c) => c.name === context.cluster);
  if (!cluster)
    throw configError(
      `context "${contextName}" refers to cluster "${context.cluster}", which kubeconfig ${from} does not define`,
    );
  let user = context.user ? config.users.find((u) => u.name === context.user) : { name: ANONYMOUS };
  if (!user)
    throw configError(
      `context "${contextName}" refers to user "${context.user}", which kubeconfig ${from} does not define`,
    );
  const provider = (user.authProvider as { name?: string } | undefined)?.name;
  // client-node's gcp and azure providers run cmd-path through a shell: kubectl removed them in 1.26
  if (provider !== undefined && REMOVED_PROVIDERS[provider])
    throw configError(`user "${user.name}": ${REMOVED_PROVIDERS[provider]}`);
  if (user.exec) {
    // kubectl tells exec plugins how they are called; client-node does not
    const exec = user.exec as {
      apiVersion?: string;
      env?: { name: string; value: string }[] | null;
    };
    const info = {
      kind: 'ExecCredential',
      apiVersion: exec.apiVersion ?? 'client.authentication.k8s.io/v1beta1',
      spec: { interactive: false },
    };
    const env2 = (exec.env ?? []).filter((e) => e.name !== 'KUBERNETES_EXEC_INFO');
    user = {
      ...user,
      exec: {
        ...exec,
        env: [...env2, { name: 'KUBERNETES_EXEC_INFO', value: JSON.stringify(info) }],
      },
    };
  }
  // a server that is no http(s) URL would fail deep inside the client as "Invalid URL"
  if (!validServer(cluster.server))
    throw configError(
      `cluster "${cluster.name}" in kubeconfig ${from}: server ${JSON.stringify(cluster.server)} is not an https:// (or http://) URL`,
    );
  // TLS verification means nothing on plain http (kubectl proxy); client-node refuses http without it
  const usedCluster = cluster.server.startsWith('http:')
    ? { ...cluster, skipTLSVerify: true }
    : cluster;
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [usedCluster],
    users: [user],
    contexts: [{ ...context, user: user.name }],
    currentContext: context.name,
  });
  return {
    kc,
    context: context.name,
    cluster: cluster.name,
    server: cluster.server,
    user: user.name === ANONYMOUS ? '(anonymous)' : user.name,
    namespace: context.namespace || 'default',
    files,
    execPlugin: (user.exec as { command?: string } | undefined)?.command,
  };
}

/** An http(s) URL with a host, as the API client needs it. */
function validServer(server: unknown): boolean {
  if (typeof server !== 'string') return false;
  try {
    const u = new URL(server);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '';
  } catch {
    return false;
  }
}
