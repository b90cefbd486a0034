// Step 3: which Pods does the selector match? When none, the nearest misses and the exact label
// difference (a typo, `app=` vs `run=`), because that is almost always the cause.
import type { Pod, Service } from '../kube/objects.js';
import { read } from '../findings/evidence.js';
import type { Finding } from '../model.js';
import { kubectl, valid, type NextCommand } from '../findings/next-command.js';
import { type Check, count, findingOf, labelText, list, pending, podsOf } from './check.js';
import type { CheckContext } from './context.js';

const finding = findingOf('selector');

function close(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 2) return false;
  // one edit, or a swap of two neighbours: typos
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const rest = (x: string, n: number) => x.slice(i + n);
  return (
    rest(a, 1) === rest(b, 1) ||
    rest(a, 1) === rest(b, 0) ||
    rest(a, 0) === rest(b, 1) ||
    (a[i] === b[i + 1] && a[i + 1] === b[i] && rest(a, 2) === rest(b, 2))
  );
}

interface Miss {
  pods: Pod[];
  /** "has run=nginx where the selector wants app=nginx" per differing selector label. */
  differences: string[];
  /** The selector that would match these Pods, when every difference is a near miss. */
  fix?: Record<string, string>;
  wrong: number;
}

/** Typo comparisons (a label against a selector key) one Pod's miss makes at most. */
const TYPO_BUDGET = 10_000;

/** How a Pod's labels differ from the selector; undefined when they are not even close. */
export function miss(
  selector: Record<string, string>,
  labels: Record<string, string>,
): Omit<Miss, 'pods'> | undefined {
  const differences: string[] = [];
  const fix: Record<string, string> = {};
  let near = 0;
  let same = 0;
  // the labels indexed once (not per selector key: 20,000 keys by 20,000 labels took minutes),
  // the first label of each value, and a budget of typo comparisons shared by all keys
  let entries: [string, string][] | undefined;
  let byValue: Map<string, number> | undefined;
  let budget = TYPO_BUDGET;
  /** The first label (in the Pod's order) with value v, or a typo of k=v. */
  const nearLabel = (k: string, v: string): [string, string] | undefined => {
    entries ??= Object.entries(labels);
    if (!byValue) {
      byValue = new Map();
      entries.forEach(([, lv], n) => {
        if (!byValue!.has(lv)) byValue!.set(lv, n);
      });
    }
    const exact = byValue.get(v) ?? entries.length;
    for (let n = 0; n < exact && budget > 0; n++, budget--) {
      const [lk, lv] = entries[n]!;
      if (close(lk, k) && close(lv, v)) return entries[n];
    }
    return entries[exact];
  };
  for (const [k, v] of Object.entries(selector)) {
    if (labels[k] === v) {
      fix[k] = v;
      same++;
      continue;
    }
    if (labels[k] !== undefined) {
      differences.push(`has ${k}=${labels[k]} where the selector wants ${k}=${v}`);
      fix[k] = labels[k]!;
      if (close(labels[k]!, v)) near++;
      continue;
    }
    const sameValue = nearLabel(k, v);
    if (sameValue) {
      differences.push(`has ${sameValue[0]}=${sameValue[1]} where the selector wants ${k}=${v}`);
      fix[sameValue[0]] = sameValue[1];
      near++;
    } else differences.push(`has no label ${k} (the selector wants ${k}=${v})`);
  }
  if (near === 0 && same === 0) return undefined;
  return {
    differences,
    wrong: differences.length,
    ...(near === differences.length ? { fix } : {}),
  };
}

function nearestMisses(svc: Service, pods: Pod[]): Miss[] {
  const groups = new Map<string, Miss>();
  for (const pod of pods) {
    const m = miss(svc.selector!, pod.labels);
    if (!m) continue;
    const key = m.differences.join('\n');
    const g = groups.get(key);
    if (g) g.pods.push(pod);
    else groups.set(key, { pods: [pod], ...m });
  }
  return [...groups.values()]
    .sort((a, b) => a.wrong - b.wrong || b.pods.length - a.pods.length)
    .slice(0, 3);
}

/** "Pod a", "Pods a and b", "Pods a, b and 3 others". */
const podPhrase = (pods: Pod[]) =>
  pods.length === 1
    ? `Pod ${pods[0]!.name}`
    : pods.length === 2
      ? `Pods ${pods[0]!.name} and ${pods[1]!.name}`
      : `Pods ${pods[0]!.name}, ${pods[1]!.name} and ${count(pods.length - 2, 'other')}`;

const podNames = (pods: Pod[]) =>
  `${pods
    .slice(0, 2)
    .map((p) => p.name)
    .join(', ')}${pods.length > 2 ? `, ... (${pods.length} Pods)` : ''}`;

/** `kubectl patch` setting the Service's selector to `fix`, or undefined when a label would not
 * survive the shell as printed. */
export function selectorPatch(
  svc: Pick<Service, 'namespace' | 'name' | 'selector'>,
  fix: Record<string, string>,
): NextCommand | undefined {
  // a JSON merge patch: null removes a selector key that is renamed
  const patch: Record<string, string | null> = { ...fix };
  for (const k of Object.keys(svc.selector ?? {})) if (!(k in patch)) patch[k] = null;
  const labels = Object.entries(patch).every(
    ([k, v]) =>
      valid.labelKey(k) !== undefined && (v === null || valid.labelValue(v) !== undefined),
  );
  if (!labels) return undefined;
  return kubectl(
    svc.namespace,
    'patch',
    'service',
    valid.name(svc.name),
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { selector: patch } }),
  );
}

function noMatch(ctx: CheckContext, svc: Service): Finding {
  const others = ctx.view.pods.filter((p) => p.namespace === svc.namespace);
  const misses = nearestMisses(svc, others);
  const sel = labelText(svc.selector!);
  const best = misses[0];
  const evidence = [
    `Service ${svc.namespace}/${svc.name}: spec.selector ${sel}`,
    `${count(others.length, 'Pod')} in namespace ${svc.namespace}, none with ${sel}`,
    ...misses.map((m) => `Pod ${podNames(m.pods)}: ${m.differences.join('; ')}`),
  ].map((l) => read(l));
  let explanation = `No Pod in namespace ${svc.namespace} has all the labels ${sel}, so the endpoint controller finds no Pods: the Service has no endpoints, and kube-proxy rejects connections to it.`;
  if (best) {
    const workloads = [...new Set(best.pods.map(workload))];
    explanation += ` The nearest miss: ${podPhrase(best.pods)} of ${list(workloads)} ${best.pods.length === 1 ? 'has' : 'have'} ${list(best.differences.map((d) => d.replace(/^has /, '')))}. Either correct the Service's selector or the Pods' labels (in their workload's Pod template).`;
  } else if (others.length > 0)
    explanation += ` None of the ${count(others.length, 'Pod')} read in the namespace has labels close to it: check the namespace, or whether the workload exists at all.`;
  else explanation += ' kdebug read no Pods in that namespace at all.';
  const next =
    (best?.fix && selectorPatch(svc, best.fix)) ??
    kubectl(svc.namespace, 'get', 'pods', '--show-labels');
  return finding('selector-matches-no-pods', 'fail', `selector ${sel} matches no Pods`, {
    explanation,
    evidence,
    next,
  });
}

/** "Deployment nginx" from a ReplicaSet owner "nginx-55fc968d9" with that pod-template-hash. */
function workload(p: Pod): string {
  if (p.ownerKind === 'ReplicaSet' && p.ownerName) {
    const hash = p.labels['pod-template-hash'];
    if (hash && p.ownerName.endsWith(`-${hash}`))
      return `Deployment ${p.ownerName.slice(0, -hash.length - 1)}`;
  }
  return p.ownerKind ? `${p.ownerKind} ${p.ownerName}` : `Pod ${p.name}`;
}

function matched(svc: Service, pods: Pod[]): Finding[] {
  const sel = labelText(svc.selector!);
  const workloads = [...new Set(pods.map(workload))];
  const evidence = pods.map((p) =>
    read(
      `Pod ${p.name}: ${p.podIP ?? 'no IP'} ${p.nodeName ? `on ${p.nodeName}` : '(not scheduled yet)'}, ${p.phase}${p.deleting ? ', terminating' : ''} (${workload(p)})`,
      `Pod ${p.namespace}/${p.name}`,
    ),
  );
  const out = [
    finding(
      'selector-matches-pods',
      'pass',
      `selector ${sel} matches ${count(pods.length, 'Pod')}`,
      {
        explanation: `The Service selects ${count(pods.length, 'Pod')} of ${list(workloads)}.`,
        evidence,
      },
    ),
  ];
  if (workloads.length > 1)
    out.push(
      finding(
        'selector-matches-several-workloads',
        'warn',
        `selector ${sel} matches Pods of ${count(workloads.length, 'workload')}`,
        {
          explanation: `The selector picks Pods of ${list(workloads)}: connections are balanced across all of them. That is rarely intended; a selector that is too broad sends some requests to the wrong application.`,
          evidence,
          next: kubectl(
            svc.namespace,
            'get',
            'pods',
            '-l',
            valid.selector(svc.selector),
            '-L',
            'app.kubernetes.io/name',
            '--show-labels',
          ),
        },
      ),
    );
  return out;
}

export const selectorCheck: Check<'selector'> = {
  id: 'selector',
  title: 'Selector',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName'],
    id: 'selector-not-used',
    title: 'ExternalName: no selector, no Pods',
    explanation: 'An ExternalName Service points at a DNS name, not at Pods.',
  },
  run(ctx) {
    const svc = ctx.service!;
    if (!svc.selector)
      return [
        finding('selector-none', 'pass', 'no selector: the endpoints are managed by hand', {
          explanation: `Kubernetes adds no Pods to ${svc.namespace}/${svc.name}: its EndpointSlices are written by a person or another controller, and stay as they are when Pods come and go.`,
          evidence: ctx
            .slices()
            .map((s) =>
              read(
                `EndpointSlice ${s.name}: managed by ${s.managedBy ?? '(no endpointslice.kubernetes.io/managed-by label)'}`,
              ),
            ),
          info: true,
        }),
      ];
    const pods = ctx.selectedPods();
    if (pods.length === 0 && ctx.waiting('objects')) return pending('reading the Pods');
    const why = pods.length === 0 ? ctx.notCaptured('Pod') : undefined;
    if (why)
      return [
        finding(
          'pods-not-observed',
          'skip',
          `selector ${labelText(svc.selector)}: Pods not captured`,
          {
            explanation: `kdebug did not see the Pods (${why}), so it cannot tell whether the selector matches any: "no Pods" would be a guess. The EndpointSlices (step 4) show what the endpoint controller matched.`,
            next: podsOf(svc),
          },
        ),
      ];
    return pods.length === 0 ? [noMatch(ctx, svc)] : matched(svc, pods);
  },
};
