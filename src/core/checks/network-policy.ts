// NetworkPolicies that select the Service's Pods for ingress (the Debug Services page asks about
// them first): with one in place, only the sources its rules allow can connect, and everyone
// else's packets are dropped silently, which looks like a timeout, never like a refusal.
import { selectorMatches, type Pod } from '../kube.js';
import type { KubeObject } from '../model.js';
import type { CheckContext } from './context.js';

type J = Record<string, unknown>;

export interface AppliedPolicy {
  name: string;
  /** Its podSelector uses matchExpressions, which are not evaluated: it may select them. */
  maybe: boolean;
}

function selects(policy: KubeObject, pod: Pod): { yes: boolean; maybe: boolean } {
  const sel = ((policy['spec'] as J | undefined)?.['podSelector'] ?? {}) as J;
  const labels = (sel['matchLabels'] ?? {}) as Record<string, string>;
  const exprs = Array.isArray(sel['matchExpressions']) && sel['matchExpressions'].length > 0;
  return { yes: selectorMatches(labels, pod.labels), maybe: exprs };
}

function ingress(policy: KubeObject): boolean {
  const spec = (policy['spec'] ?? {}) as J;
  const types = spec['policyTypes'];
  // without policyTypes every policy restricts ingress
  return Array.isArray(types) ? types.includes('Ingress') : true;
}

/** The ingress NetworkPolicies of the Service's namespace that select any of its Pods. */
export function policiesFor(ctx: CheckContext): AppliedPolicy[] {
  const svc = ctx.service;
  const pods = ctx.selectedPods();
  if (!svc || pods.length === 0) return [];
  return ctx.view.networkPolicies
    .filter((p) => (p.metadata?.namespace ?? 'default') === svc.namespace && ingress(p))
    .flatMap((p) => {
      const hits = pods.map((pod) => selects(p, pod)).filter((s) => s.yes);
      return hits.length > 0
        ? [{ name: p.metadata?.name ?? '', maybe: hits.every((h) => h.maybe) }]
        : [];
    });
}
