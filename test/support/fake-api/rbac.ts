// A per-test RBAC table. Real RBAC only allows; `deny` is a test convenience for "everything
// except this", which would take many allow rules to write.
import type { ResourceType } from './resources.js';

export interface RbacRule {
  /** User names the rule applies to; every user when absent. */
  users?: string[];
  /** get, list, watch, create, delete, ... or '*'. */
  verbs: string[];
  /** "pods", "pods/exec", "endpointslices.discovery.k8s.io", or '*'. */
  resources: string[];
  /** Namespaces the rule covers; everywhere (cluster scope included) when absent. */
  namespaces?: string[];
}

export interface RbacTable {
  /** When present, only these are allowed. */
  allow?: RbacRule[];
  deny?: RbacRule[];
}

export interface Attributes {
  user: string;
  verb: string;
  type: ResourceType;
  subresource?: string;
  namespace?: string;
}

function matches(rule: RbacRule, a: Attributes): boolean {
  const resource = `${a.type.resource}${a.subresource ? `/${a.subresource}` : ''}${a.type.group ? `.${a.type.group}` : ''}`;
  return (
    (!rule.users || rule.users.includes(a.user)) &&
    (rule.verbs.includes('*') || rule.verbs.includes(a.verb)) &&
    (rule.resources.includes('*') || rule.resources.includes(resource)) &&
    (!rule.namespaces || (a.namespace !== undefined && rule.namespaces.includes(a.namespace)))
  );
}

export function allowed(table: RbacTable | undefined, a: Attributes): boolean {
  if (!table) return true;
  if (table.deny?.some((r) => matches(r, a))) return false;
  return !table.allow || table.allow.some((r) => matches(r, a));
}
