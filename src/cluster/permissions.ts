// What kdebug asks of the API server, as RBAC rules: one list the debug Pod and kube-proxy
// preflights check, and `kdebug rbac` prints as Roles a cluster admin can apply. A test runs
// kdebug against an API server that allows exactly these, and shows each one is needed.

export interface PermissionRule {
  /** The API group: "" for the core group. */
  group: string;
  resource: string;
  verbs: string[];
  /** Only these objects (RBAC's resourceNames): get by name needs no more. */
  names?: string[];
  /** Why kdebug needs it, for the YAML's comment. */
  why: string;
}

/** Where rules apply: one namespace (a Role) or the cluster (a ClusterRole). */
export interface Grant {
  namespace?: string;
  rules: PermissionRule[];
}

export type NodeAccessGrant = 'kube-proxy' | 'pod' | 'ssh';

export interface PermissionOptions {
  /** The Services' namespace; undefined: every namespace (`snapshot save --all -A`). */
  namespace?: string;
  /** How the nodes are reached (SSH only reads the Node it connects to). */
  via: NodeAccessGrant[];
  /** Where debug Pods are made (--debug-namespace). */
  debugNamespace?: string;
}

export const SYSTEM = 'kube-system';
/** The namespace debug Pods live in unless --debug-namespace says otherwise: kdebug's alone. */
export const DEBUG_NAMESPACE = 'kdebug';

/** What the diagnosis reads about the Services of one namespace (or of all). */
const SERVICE_READS: PermissionRule[] = [
  {
    group: '',
    resource: 'services',
    verbs: ['get', 'list'],
    why: 'the Service; the list names near misses and serves --all',
  },
  {
    group: 'discovery.k8s.io',
    resource: 'endpointslices',
    verbs: ['list'],
    why: "the Service's endpoints",
  },
  {
    group: '',
    resource: 'endpoints',
    verbs: ['get', 'list'],
    why: 'the legacy Endpoints, compared with the slices',
  },
  {
    group: '',
    resource: 'pods',
    verbs: ['get', 'list'],
    why: 'the Pods the selector and the endpoints name',
  },
  {
    group: 'networking.k8s.io',
    resource: 'networkpolicies',
    verbs: ['list'],
    why: 'policies that may drop the traffic',
  },
];

/** kube-proxy's and the cluster DNS's objects in kube-system. */
const ADDON_READS: PermissionRule[] = [
  {
    group: 'apps',
    resource: 'daemonsets',
    verbs: ['get'],
    names: ['kube-proxy'],
    why: "kube-proxy's DaemonSet (its version and flags)",
  },
  {
    group: '',
    resource: 'pods',
    verbs: ['list'],
    why: 'the kube-proxy, Cilium agent and CoreDNS Pods',
  },
  {
    group: '',
    resource: 'services',
    verbs: ['get'],
    names: ['kube-dns'],
    why: 'the cluster DNS Service',
  },
  {
    group: 'discovery.k8s.io',
    resource: 'endpointslices',
    verbs: ['list'],
    why: 'the cluster DNS endpoints',
  },
  {
    group: '',
    resource: 'configmaps',
    verbs: ['get'],
    names: ['kube-proxy', 'kube-proxy-config', 'cilium-config', 'coredns'],
    why: "kube-proxy's and Cilium's configuration and the Corefile (no other ConfigMap)",
  },
];

const CLUSTER_READS: PermissionRule[] = [
  {
    group: '',
    resource: 'nodes',
    verbs: ['list'],
    why: 'the nodes, their addresses and Pod CIDRs',
  },
  {
    group: 'networking.k8s.io',
    resource: 'servicecidrs',
    verbs: ['list'],
    why: 'the Service CIDRs (kube-proxy in nftables mode drops traffic to their unused addresses)',
  },
  {
    group: 'authorization.k8s.io',
    resource: 'selfsubjectaccessreviews',
    verbs: ['create'],
    why: 'asks before it tries (every user has it through system:basic-user)',
  },
];

/**
 * Exec in the node's kube-proxy Pod (--via kube-proxy): WebSocket exec is authorized as get and
 * create. RBAC cannot narrow it to the kube-proxy Pods: their names are generated per rollout.
 */
export const KUBE_PROXY_EXEC: PermissionRule = {
  group: '',
  resource: 'pods/exec',
  verbs: ['get', 'create'],
  why:
    'lets the holder exec into every Pod in kube-system (etcd and the API server where they run as Pods): near cluster-admin.\n' +
    'kdebug runs only rule listings (iptables-save, nft, ipvsadm, ipset) in the kube-proxy Pods, but resourceNames cannot name them (generated, new on every rollout).\n' +
    'Prefer --via pod in a dedicated namespace, or --via ssh',
};

/** The debug Pods of --via pod, in their namespace: made, watched, renewed, exec'd, deleted. */
export const DEBUG_POD_RULES: PermissionRule[] = [
  {
    group: '',
    resource: 'pods',
    verbs: ['create', 'get', 'patch', 'delete'],
    why:
      'the debug Pods: created, watched, their lease renewed, deleted.\n' +
      'In a namespace that allows privileged Pods, create is root on every node: grant it as you would node access',
  },
  {
    group: '',
    resource: 'pods/exec',
    verbs: ['get', 'create'],
    why:
      'runs the read-only node commands in the debug Pods; it lets the holder exec into every Pod in this namespace.\n' +
      'resourceNames cannot name the debug Pods (their names are generated): keep this namespace for them alone',
  },
];

/** `kdebug cleanup` finds the debug Pods left behind by their label; the preflight looks for others. */
const CLEANUP_RULE: PermissionRule = {
  group: '',
  resource: 'pods',
  verbs: ['list'],
  why: 'kdebug cleanup finds the debug Pods by label, a run finds by its label a Pod whose create went unanswered, and kdebug warns when other Pods share the namespace',
};

const merge = (grants: Grant[]): Grant[] => {
  const by = new Map<string, Grant>();
  for (const g of grants) {
    const key = g.namespace ?? '';
    const have = by.get(key);
    if (have) have.rules.push(...g.rules);
    else by.set(key, { ...g, rules: [...g.rules] });
  }
  return [...by.values()];
};

/** The grants kdebug needs for what was asked, cluster scope first. */
export function permissions(o: PermissionOptions): Grant[] {
  const grants: Grant[] = [
    { rules: [...CLUSTER_READS, ...(o.namespace === undefined ? SERVICE_READS : [])] },
    ...(o.namespace === undefined ? [] : [{ namespace: o.namespace, rules: SERVICE_READS }]),
    { namespace: SYSTEM, rules: ADDON_READS },
  ];
  if (o.via.includes('ssh'))
    grants.push({
      rules: [
        {
          group: '',
          resource: 'nodes',
          verbs: ['get'],
          why: 'SSH connects to the address of the Node it reads',
        },
      ],
    });
  if (o.via.includes('kube-proxy')) grants.push({ namespace: SYSTEM, rules: [KUBE_PROXY_EXEC] });
  if (o.via.includes('pod')) {
    const ns = o.debugNamespace ?? DEBUG_NAMESPACE;
    grants.push({ namespace: ns, rules: [CLEANUP_RULE, ...DEBUG_POD_RULES] });
    grants.push({
      rules: [
        {
          group: '',
          resource: 'namespaces',
          verbs: ['get'],
          names: [ns],
          why: 'whether the debug namespace exists and its Pod Security level allows privileged Pods',
        },
      ],
    });
  }
  return merge(grants).map((g) => ({ ...g, rules: squash(g.rules) }));
}

/** Rules on one resource and the same names become one, their verbs joined. */
function squash(rules: PermissionRule[]): PermissionRule[] {
  const out: PermissionRule[] = [];
  for (const r of rules) {
    const same = out.find(
      (x) =>
        x.group === r.group && x.resource === r.resource && String(x.names) === String(r.names),
    );
    if (!same) out.push({ ...r, verbs: [...r.verbs] });
    else {
      for (const v of r.verbs) if (!same.verbs.includes(v)) same.verbs.push(v);
      if (!same.why.includes(r.why)) same.why = `${same.why}; ${r.why}`;
    }
  }
  return out;
}

export interface RbacSubject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  namespace?: string;
}

const quote = (s: string) => JSON.stringify(s);

function ruleYaml(r: PermissionRule): string {
  const [resource, sub] = r.resource.split('/');
  return [
    ...r.why.split('\n').map((line) => `  # ${line}`),
    `  - apiGroups: [${quote(r.group)}]`,
    `    resources: [${quote(sub ? `${resource}/${sub}` : resource!)}]`,
    ...(r.names ? [`    resourceNames: [${r.names.map(quote).join(', ')}]`] : []),
    `    verbs: [${r.verbs.map(quote).join(', ')}]`,
  ].join('\n');
}

function subjectYaml(s: RbacSubject): string {
  return [
    `  - kind: ${s.kind}`,
    `    name: ${quote(s.name)}`,
    ...(s.kind === 'ServiceAccount'
      ? [`    namespace: ${quote(s.namespace ?? 'default')}`]
      : ['    apiGroup: rbac.authorization.k8s.io']),
  ].join('\n');
}

/** A Namespace as a YAML document for `kubectl apply -f -` (kdebug's own, labelled for its Pods). */
export function namespaceYaml(name: string, labels: Record<string, string>): string {
  return [
    '---',
    'apiVersion: v1',
    'kind: Namespace',
    'metadata:',
    `  name: ${quote(name)}`,
    '  labels:',
    ...Object.entries(labels).map(([k, v]) => `    ${quote(k)}: ${quote(v)}`),
    '',
  ].join('\n');
}

/** The grants as YAML documents for `kubectl apply -f -`, with bindings when a subject is given. */
export function rbacYaml(grants: Grant[], name: string, subject?: RbacSubject): string {
  const docs: string[] = [];
  for (const g of grants) {
    const kind = g.namespace === undefined ? 'ClusterRole' : 'Role';
    const meta = [
      `  name: ${quote(name)}`,
      ...(g.namespace ? [`  namespace: ${quote(g.namespace)}`] : []),
    ];
    docs.push(
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        `kind: ${kind}`,
        'metadata:',
        ...meta,
        'rules:',
        ...g.rules.map(ruleYaml),
      ].join('\n'),
    );
    if (subject)
      docs.push(
        [
          'apiVersion: rbac.authorization.k8s.io/v1',
          `kind: ${kind}Binding`,
          'metadata:',
          ...meta,
          'roleRef:',
          '  apiGroup: rbac.authorization.k8s.io',
          `  kind: ${kind}`,
          `  name: ${quote(name)}`,
          'subjects:',
          subjectYaml(subject),
        ].join('\n'),
      );
  }
  return docs.map((d) => `---\n${d}\n`).join('');
}
