// Drift's finding ids in every mode, the severity each is said with (SEVERITY), and whether each
// says the node does not send a Service's traffic to its endpoints (NOT_FORWARDED). drift.ts
// builds the findings and re-exports these: import them from there.
import type { Severity } from '../model.js';

export type DriftId =
  | 'service-rules-missing'
  | 'service-chain-missing'
  | 'endpoint-missing'
  | 'endpoint-dnat-missing'
  | 'service-chain-falls-through'
  | 'endpoint-stale'
  | 'entry-stale'
  | 'weights-uneven'
  | 'affinity-wrong'
  | 'masquerade-missing'
  | 'masquerade-differs'
  | 'nodeport-missing'
  | 'local-policy-wrong'
  | 'no-endpoints-reject-missing'
  | 'firewall-missing'
  | 'entry-jump-missing'
  | 'orphan-chain'
  | 'local-policy-drop'
  | 'rule-text-differs'
  | 'rule-behaviour-differs'
  | 'service-traffic-diverted'
  | 'jump-target-missing'
  | 'table-not-captured'
  | 'other-mode-leftover'
  | 'element-chain-missing'
  | 'endpoint-not-in-numgen'
  | 'vip-not-on-kube-ipvs0'
  | 'ipset-entry-missing'
  | 'real-server-weight-zero'
  | 'cilium-frontend-missing'
  | 'cilium-frontend-stale'
  | 'cilium-backend-missing'
  | 'cilium-backend-stale'
  | 'cilium-backend-state-differs'
  | 'cilium-backend-weight-differs'
  | 'cilium-frontend-not-reconciled'
  | 'cilium-bpf-map-differs'
  | 'cilium-affinity-differs'
  | 'cilium-source-range-missing'
  | 'cilium-source-range-differs'
  | 'cilium-traffic-policy-differs'
  | 'cilium-forwarding-differs'
  | 'cilium-algorithm-differs'
  | 'cilium-reverse-nat-differs'
  | 'cilium-config-refused'
  | 'cilium-agent-pod-absent'
  | 'cilium-local-redirect'
  | 'cilium-left-to-kube-proxy'
  | 'cilium-kube-proxy-rules'
  | 'cilium-source-range-ignored';

export const SEVERITY: Record<DriftId, Severity> = {
  'service-rules-missing': 'error',
  'service-chain-missing': 'error',
  'endpoint-stale': 'error',
  'entry-stale': 'warning',
  'local-policy-wrong': 'error',
  'nodeport-missing': 'error',
  'entry-jump-missing': 'error',
  'endpoint-missing': 'warning',
  'endpoint-dnat-missing': 'warning',
  'service-chain-falls-through': 'error',
  'weights-uneven': 'warning',
  'affinity-wrong': 'warning',
  'masquerade-missing': 'warning',
  'masquerade-differs': 'warning',
  'no-endpoints-reject-missing': 'warning',
  'firewall-missing': 'warning',
  'orphan-chain': 'warning',
  'local-policy-drop': 'info',
  'rule-text-differs': 'info',
  'rule-behaviour-differs': 'warning',
  'service-traffic-diverted': 'error',
  'jump-target-missing': 'error',
  'table-not-captured': 'info',
  // leftovers.ts says it as an error where they DNAT to stale endpoints, info where unhooked
  'other-mode-leftover': 'warning',
  'element-chain-missing': 'error',
  'endpoint-not-in-numgen': 'warning',
  'vip-not-on-kube-ipvs0': 'error',
  'ipset-entry-missing': 'warning',
  'real-server-weight-zero': 'warning',
  'cilium-frontend-missing': 'error',
  'cilium-frontend-stale': 'warning',
  'cilium-backend-missing': 'warning',
  'cilium-backend-stale': 'error',
  'cilium-backend-state-differs': 'warning',
  'cilium-backend-weight-differs': 'warning',
  'cilium-frontend-not-reconciled': 'error',
  'cilium-bpf-map-differs': 'error',
  'cilium-affinity-differs': 'warning',
  'cilium-source-range-missing': 'error',
  'cilium-source-range-differs': 'error',
  'cilium-traffic-policy-differs': 'warning',
  'cilium-forwarding-differs': 'warning',
  'cilium-algorithm-differs': 'warning',
  'cilium-reverse-nat-differs': 'error',
  'cilium-config-refused': 'info',
  'cilium-agent-pod-absent': 'info',
  'cilium-local-redirect': 'info',
  // read, not observed: kube-proxy may run outside the API
  'cilium-left-to-kube-proxy': 'warning',
  // leftovers.ts says it as information where nothing enters them
  'cilium-kube-proxy-rules': 'warning',
  'cilium-source-range-ignored': 'info',
};

/** Whether a finding of the id says the node does not send a Service's traffic to its ready
 * endpoints (a traffic policy "not met" on that node): every error-severity id does, and the
 * warnings where an endpoint goes without its share all the same; each id decides here. */
export const NOT_FORWARDED: Record<DriftId, boolean> = {
  'service-rules-missing': true,
  'service-chain-missing': true,
  'endpoint-stale': true,
  'entry-stale': false,
  'local-policy-wrong': true,
  'nodeport-missing': true,
  'entry-jump-missing': true,
  'endpoint-missing': true,
  'endpoint-dnat-missing': true,
  'service-chain-falls-through': true,
  'weights-uneven': false,
  'affinity-wrong': false,
  'masquerade-missing': false,
  'masquerade-differs': false,
  'no-endpoints-reject-missing': false,
  'firewall-missing': false,
  'orphan-chain': false,
  'local-policy-drop': false,
  'rule-text-differs': false,
  'rule-behaviour-differs': true,
  'service-traffic-diverted': true,
  'jump-target-missing': true,
  'table-not-captured': false,
  // the live rules still forward; the leftover takes some connections besides, said itself
  'other-mode-leftover': false,
  'element-chain-missing': true,
  'endpoint-not-in-numgen': true,
  'vip-not-on-kube-ipvs0': true,
  'ipset-entry-missing': false,
  'real-server-weight-zero': true,
  'cilium-frontend-missing': true,
  'cilium-frontend-stale': false,
  'cilium-backend-missing': true,
  'cilium-backend-stale': true,
  'cilium-backend-state-differs': false,
  // every backend still gets new connections, in other shares than the weights say
  'cilium-backend-weight-differs': false,
  'cilium-frontend-not-reconciled': true,
  'cilium-bpf-map-differs': true,
  'cilium-affinity-differs': false,
  'cilium-source-range-missing': true,
  'cilium-source-range-differs': true,
  'cilium-traffic-policy-differs': true,
  'cilium-forwarding-differs': true,
  'cilium-algorithm-differs': false,
  'cilium-reverse-nat-differs': true,
  'cilium-config-refused': false,
  'cilium-agent-pod-absent': false,
  // its traffic goes to the policy's Pods, not the Service's endpoints (by design)
  'cilium-local-redirect': true,
  // nothing known serves the kind the agent leaves to kube-proxy there
  'cilium-left-to-kube-proxy': true,
  // the agent forwards what it holds; kube-proxy's rules take only what it passes, said itself
  'cilium-kube-proxy-rules': false,
  'cilium-source-range-ignored': false,
};
