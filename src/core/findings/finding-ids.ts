// Every finding id, per step, in one typed list: finding() takes only these, and the README's
// table and the report schema's id examples are checked against it (test/readme-ids.test.ts).
import type { DriftId } from '../dataplane/drift.js';

export const STEP_FINDING_IDS = {
  service: [
    'service-found',
    'service-not-found',
    'service-not-captured',
    'service-port-not-found',
    'service-headless',
    'service-external-name',
    'external-name-is-ip',
  ],
  ports: [
    'target-port-ok',
    'target-port-not-exposed',
    'port-protocol-mismatch',
    'target-port-string',
    'target-port-undeclared',
    'target-port-manual',
    'ports-no-pods',
    'ports-not-used',
    'pods-not-observed',
  ],
  selector: [
    'selector-matches-pods',
    'selector-matches-no-pods',
    'selector-matches-several-workloads',
    'selector-none',
    'selector-not-used',
    'pods-not-observed',
  ],
  endpoints: [
    'endpoints-ready',
    'no-ready-endpoints',
    'endpoint-not-ready',
    'endpoint-node-not-ready',
    'only-terminating-endpoints',
    'endpoints-disagree',
    'pod-missing-from-endpoints',
    'endpoint-pod-gone',
    'endpoint-not-a-pod',
    'endpoint-holder-not-observed',
    'pod-restarting',
    'publish-not-ready-addresses',
    'endpoints-not-used',
    'endpoints-not-observed',
  ],
  dns: [
    'coredns-ready',
    'coredns-unavailable',
    'coredns-degraded',
    'dns-names',
    'dns-answer-ok',
    'dns-answer-wrong',
    'dns-zone-mismatch',
    'dns-lookup-not-recorded',
    'dns-lookup-not-observed',
    'coredns-not-recorded',
    'coredns-not-observed',
  ],
  'kube-proxy': [
    'kube-proxy-running',
    'kube-proxy-not-running',
    'kube-proxy-outside-pod',
    'proxy-mode',
    'proxy-mode-differs',
    'kube-proxy-embedded',
    'kube-proxy-version',
    'kube-proxy-version-not-observed',
    'kube-proxy-synced',
    'kube-proxy-sync-stale',
    'kube-proxy-replaced',
    'cilium-agent-missing',
    'cilium-agent-failing',
    'iptables-backend',
    'iptables-backends-both',
    'kube-proxy-not-observed',
    'kube-proxy-node-not-ready',
    'nodes-not-observed',
    'proxy-mode-not-observed',
    'kube-proxy-sync-not-observed',
    'kube-proxy-not-recorded',
    'kube-proxy-config-unreadable',
    'kube-proxy-not-involved',
  ],
  rules: [
    'rules-match',
    'rules-release-disagrees',
    'rules-not-read',
    'rules-not-observed',
    'rules-nodes-not-read',
    'rules-not-linux',
    'rules-ipv6-not-observed',
    'rules-not-recorded',
    'rules-unreadable',
    'rules-not-checked',
    'rules-other-mode',
    'rules-not-kube-proxy',
    'rules-not-used',
    'rules-read-whole',
    'rules-nftables-not-observed',
    'rules-ipvs-not-observed',
    'rules-cilium-not-observed',
  ],
  reachability: [
    'clusterip-reachable',
    'clusterip-unreachable',
    'endpoints-reachable',
    'endpoint-unreachable',
    'ping-clusterip-explained',
    'network-policy-applies',
    'conntrack-stale-entries',
    'conntrack-entries-current',
    'conntrack-insert-failed',
    'conntrack-not-observed',
    'probes-not-recorded',
    'probe-not-observed',
    'reachability-not-checked',
  ],
  'traffic-policy': [
    'traffic-policy-cluster',
    'local-endpoints-everywhere',
    'no-local-endpoint',
    'traffic-policy-not-met',
    'traffic-policy-not-observed',
    'traffic-policy-not-checked',
    'traffic-policy-not-used',
  ],
  hairpin: [
    'hairpin-masquerade-present',
    'hairpin-masquerade-missing',
    'hairpin-not-observed',
    'hairpin-not-checked',
    'hairpin-not-used',
  ],
} as const;

/** Ids any step may carry: its Service missing, its input still being read, a bug in kdebug. */
export const ANY_STEP_IDS = ['needs-service', 'pending', 'check-crashed'] as const;

export type StepId = keyof typeof STEP_FINDING_IDS;
/** The ids one step's findings may carry: its own, any step's, and for the Rules step the
 * node findings of `kdebug drift`. */
export type StepFindingId<S extends StepId> =
  | (typeof STEP_FINDING_IDS)[S][number]
  | (S extends 'rules' ? DriftId : never)
  | (typeof ANY_STEP_IDS)[number];
/** A finding's id: a step's own, one of `kdebug drift`'s (the Rules step's per node), or any step's. */
export type FindingId =
  (typeof STEP_FINDING_IDS)[StepId][number] | DriftId | (typeof ANY_STEP_IDS)[number];
