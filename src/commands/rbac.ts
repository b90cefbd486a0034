// `kdebug rbac`: the Roles kdebug needs for what was asked, as YAML to review and apply. It is
// offline on purpose: the person asking is often not the one who may read the cluster, and RBAC
// cannot name the Pods kdebug execs into (kube-proxy's and the debug Pods' names are generated),
// so the comments say plainly how far each exec grant reaches.
import { DEBUG_NAMESPACE_LABELS } from '../cluster/nodes/debug-pod/manifest.js';
import {
  DEBUG_NAMESPACE,
  namespaceYaml,
  permissions,
  rbacYaml,
  type NodeAccessGrant,
  type RbacSubject,
} from '../cluster/permissions.js';
import { EXIT, format, textWidth, UsageError, write, type GlobalOptions } from './common/io.js';
import { wrapComments } from '../output/wrap.js';
import { withExamples, type Define } from './common/flags.js';
import { Option } from 'commander';

export interface RbacFlags {
  via?: string;
  allNamespaces?: boolean;
  debugNamespace?: string;
  name: string;
  user?: string;
  group?: string;
  serviceaccount?: string;
}

const VIAS: Record<string, NodeAccessGrant[]> = {
  none: [],
  ssh: ['ssh'],
  'kube-proxy': ['kube-proxy'],
  pod: ['pod'],
  auto: ['kube-proxy', 'pod', 'ssh'],
};

function subjectOf(o: RbacFlags): RbacSubject | undefined {
  const given = [o.user, o.group, o.serviceaccount].filter((x) => x !== undefined);
  if (given.length > 1) throw new UsageError('choose one: --user, --group or --serviceaccount');
  if (o.user) return { kind: 'User', name: o.user };
  if (o.group) return { kind: 'Group', name: o.group };
  if (o.serviceaccount) {
    const m = /^([a-z0-9-]+):([a-z0-9.-]+)$/.exec(o.serviceaccount);
    if (!m) throw new UsageError('--serviceaccount takes NAMESPACE:NAME, as kubectl does');
    return { kind: 'ServiceAccount', namespace: m[1], name: m[2]! };
  }
  return undefined;
}

/** What --via kube-proxy grants: exec in kube-system cannot be narrowed to kube-proxy's Pods. */
const KUBE_PROXY_NOTE = [
  "# --via kube-proxy: exec in kube-system to read each node's rules. This grant lets the holder exec",
  '# into every Pod in kube-system (etcd and the API server where they run as Pods): near cluster-admin.',
  '# RBAC cannot narrow it to the kube-proxy Pods: their names are generated and change with every',
  '# rollout. Prefer --via pod in a dedicated namespace, or --via ssh.',
];

/** What --via pod grants, and what its namespace must be. */
function podNote(debugNs: string, namespace: string | undefined): string[] {
  return [
    `# --via pod: debug Pods in namespace ${debugNs}, which must allow Pod Security "privileged". Creating`,
    "# Pods there is root on every node, and exec reaches every Pod there (the debug Pods' names are",
    '# generated, so resourceNames cannot name them): keep the namespace for kdebug alone.',
    debugNs === DEBUG_NAMESPACE
      ? `# The Namespace ${debugNs} comes first, labelled privileged: kdebug makes it itself only for a user who may create namespaces.`
      : `# ${debugNs} is not kdebug's own namespace (${DEBUG_NAMESPACE}): label it yourself (kubectl label namespace ${debugNs} pod-security.kubernetes.io/enforce=privileged) and keep other workloads out of it.`,
    debugNs === namespace
      ? `# ${debugNs} is also the Services' namespace: this Role can exec into every workload there. Give debug Pods a namespace of their own.`
      : '',
  ];
}

export function rbacCommand(o: RbacFlags, g: GlobalOptions): number {
  format(g, 'rbac');
  const via = VIAS[o.via ?? 'none'];
  if (!via) throw new UsageError(`--via takes ${Object.keys(VIAS).join(', ')}`);
  if (o.allNamespaces && g.namespace)
    throw new UsageError('choose one: -n NAMESPACE or -A/--all-namespaces');
  const namespace = o.allNamespaces ? undefined : (g.namespace ?? 'default');
  const subject = subjectOf(o);
  const grants = permissions({ namespace, via, debugNamespace: o.debugNamespace });
  const debugNs = o.debugNamespace ?? DEBUG_NAMESPACE;
  const what = [
    `# What kdebug reads to diagnose Services ${namespace ? `in namespace ${namespace}` : 'in every namespace (snapshot save --all -A)'}`,
    ...(via.includes('kube-proxy') ? KUBE_PROXY_NOTE : []),
    ...(via.includes('pod') ? podNote(debugNs, namespace) : []),
    via.length === 0
      ? '# Node rules are not covered: --via kube-proxy, pod or ssh adds what each needs.'
      : '',
    // the agent's listings are read in its Pod whatever --via says (cluster/nodes/transport.ts)
    via.includes('kube-proxy')
      ? "# Where Cilium replaces kube-proxy, the same grant reads its agent's tables (cilium-dbg listings, read-only) in its Pods."
      : "# Where Cilium replaces kube-proxy, its agent's tables are read by exec in its Pods in kube-system: that needs --via kube-proxy's pods/exec there; without it those nodes are said not read.",
    via.includes('pod')
      ? '# Read-only on the API objects but its own debug Pods; Secrets are never read.'
      : '# Read-only on the API objects; Secrets are never read.',
    subject
      ? ''
      : '# Bind it with --user, --group or --serviceaccount NS:NAME (bindings are then printed too).',
  ].filter(Boolean);
  // the Namespace before the Role in it: kubectl apply takes the documents in order
  const ns =
    via.includes('pod') && debugNs === DEBUG_NAMESPACE
      ? namespaceYaml(debugNs, DEBUG_NAMESPACE_LABELS)
      : '';
  write(
    wrapComments(
      `${what.join('\n')}\n${ns}${rbacYaml(grants, o.name, subject)}`,
      textWidth().width,
    ),
  );
  return EXIT.ok;
}

/** `kdebug rbac`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    parent
      .command('rbac')
      .description(
        'the ClusterRole and Roles kdebug needs for what you ask of it, as YAML to apply',
      )
      .addOption(
        new Option(
          '--via <how>',
          'node access to grant too: none, kube-proxy, pod, ssh, or auto (all three)',
        )
          .choices(['none', 'ssh', 'kube-proxy', 'pod', 'auto'])
          .default('none'),
      )
      .option('-A, --all-namespaces', 'Services of every namespace (snapshot save --all -A)')
      .option('--debug-namespace <ns>', 'where debug Pods are made (default: kdebug)')
      .option('--name <name>', 'name of the roles and bindings', 'kdebug')
      .option('--user <name>', 'bind them to this user')
      .option('--group <name>', 'bind them to this group')
      .option('--serviceaccount <ns:name>', 'bind them to this ServiceAccount'),
    [
      'kdebug rbac -n shop --user alice | kubectl apply -f -',
      'kdebug rbac --via pod --serviceaccount ci:kdebug',
      'kdebug rbac -A --via kube-proxy             # for snapshot save --all -A',
    ],
  ).action((o: RbacFlags) => run(Promise.resolve(rbacCommand(o, g()))));
};
