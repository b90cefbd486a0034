// `kdebug rbac`: the Roles kdebug needs for what was asked, as YAML to review and apply.
import {
  permissions,
  rbacYaml,
  type NodeAccessGrant,
  type RbacSubject,
} from '../cluster/permissions.js';
import { EXIT, format, UsageError, write, type GlobalOptions } from './io.js';

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

export function rbacCommand(o: RbacFlags, g: GlobalOptions): number {
  format(g, 'rbac');
  const via = VIAS[o.via ?? 'none'];
  if (!via) throw new UsageError(`--via takes ${Object.keys(VIAS).join(', ')}`);
  if (o.allNamespaces && g.namespace)
    throw new UsageError('choose one: -n NAMESPACE or -A/--all-namespaces');
  const namespace = o.allNamespaces ? undefined : (g.namespace ?? 'default');
  const subject = subjectOf(o);
  const grants = permissions({ namespace, via, debugNamespace: o.debugNamespace });
  const what = [
    `# What kdebug reads to diagnose Services ${namespace ? `in namespace ${namespace}` : 'in every namespace (snapshot save --all -A)'}`,
    via.includes('kube-proxy') ? "# and exec in the kube-proxy Pods to read each node's rules" : '',
    via.includes('pod')
      ? `# and debug Pods in namespace ${o.debugNamespace ?? namespace ?? 'default'} (it needs Pod Security "privileged")`
      : '',
    via.length === 0
      ? '# Node rules are not covered: --via kube-proxy, pod or ssh adds what each needs.'
      : '',
    // pods/exec in the Services' own namespace reaches every Pod there
    via.includes('pod') && (o.debugNamespace ?? namespace) === namespace
      ? `# exec on pods in ${namespace ?? 'default'} lets the holder run commands in every Pod there: give debug Pods a namespace of their own (--debug-namespace).`
      : '',
    via.includes('pod')
      ? '# Read-only on the API objects but its own debug Pods; Secrets are never read.'
      : '# Read-only on the API objects; Secrets are never read.',
    subject
      ? ''
      : '# Bind it with --user, --group or --serviceaccount NS:NAME (bindings are then printed too).',
  ].filter(Boolean);
  write(`${what.join('\n')}\n${rbacYaml(grants, o.name, subject)}`);
  return EXIT.ok;
}
