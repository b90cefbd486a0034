// Label selectors in the API's query syntax: a Service's (equality only) and a workload's
// metav1.LabelSelector (matchLabels and matchExpressions).

/** Service selector -> labelSelector ("app=web,tier=front"). */
export const equalitySelector = (s: Record<string, string>) =>
  Object.entries(s)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** A workload's metav1.LabelSelector -> the labelSelector query syntax. */
export function labelSelectorString(s: LabelSelectorSpec): string {
  const exprs = (s.matchExpressions ?? []).map((e) => {
    const values = (e.values ?? []).join(',');
    switch (e.operator) {
      case 'In':
        return `${e.key} in (${values})`;
      case 'NotIn':
        return `${e.key} notin (${values})`;
      case 'DoesNotExist':
        return `!${e.key}`;
      default:
        return e.key;
    }
  });
  return [equalitySelector(s.matchLabels ?? {}), ...exprs].filter(Boolean).join(',');
}
