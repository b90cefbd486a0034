// A kube-proxy Pod as a kubeadm cluster's API server serves it: the DaemonSet's Pod template
// (kubeadm's manifest, defaulted by the API server), the node affinity the DaemonSet controller
// adds, and the status a running kubelet writes. managedFields aside (kdebug drops them on
// arrival), this is what each of a large cluster's thousands of kube-proxy Pods weighs.
import type { KubeObject } from '../../src/core/model.js';
import { RUNNING_CONDITIONS } from '../support/fake-api/pods.js';

const T = '2026-11-02T08:14:31Z';
const IMAGE = 'registry.k8s.io/kube-proxy:v1.31.4';
const hex = (i: number, n: number) => i.toString(16).padStart(n, '0');

const hostPath = (name: string, path: string, type: string) => ({
  name,
  hostPath: { path, type },
});

const TOLERATIONS = [
  { operator: 'Exists' },
  ...[
    'not-ready',
    'unreachable',
    'disk-pressure',
    'memory-pressure',
    'pid-pressure',
    'unschedulable',
    'network-unavailable',
  ].map((k) => ({
    key: `node.kubernetes.io/${k}`,
    operator: 'Exists',
    effect: /unreachable|not-ready/.test(k) ? 'NoExecute' : 'NoSchedule',
  })),
];

/** kube-proxy's Pod on `node`, the `i`th, Running and Ready at `ip` (hostNetwork); `flags`
 * follow kubeadm's on its command line. */
export function servedKubeProxyPod(
  i: number,
  node: string,
  ip: string,
  flags: string[] = [],
): KubeObject {
  const token = `kube-api-access-${hex(i, 5)}`;
  const condition = (type: string) => ({
    type,
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: T,
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `kube-proxy-${hex(i, 5)}`,
      generateName: 'kube-proxy-',
      namespace: 'kube-system',
      uid: `${hex(i, 8)}-1f2e-4c3d-8b5a-${hex(i, 12)}`,
      resourceVersion: String(100000 + i),
      creationTimestamp: T,
      labels: {
        'controller-revision-hash': '6d8f9b7c5d',
        'k8s-app': 'kube-proxy',
        'pod-template-generation': '1',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: 'kube-proxy',
          uid: '0c6b4a1e-2f3d-4e5f-9a8b-7c6d5e4f3a2b',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] },
            ],
          },
        },
      },
      containers: [
        {
          name: 'kube-proxy',
          image: IMAGE,
          imagePullPolicy: 'IfNotPresent',
          command: [
            '/usr/local/bin/kube-proxy',
            '--config=/var/lib/kube-proxy/config.conf',
            '--hostname-override=$(NODE_NAME)',
            ...flags,
          ],
          env: [
            {
              name: 'NODE_NAME',
              valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } },
            },
          ],
          resources: {},
          securityContext: { privileged: true },
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
          volumeMounts: [
            { name: 'kube-proxy', mountPath: '/var/lib/kube-proxy' },
            { name: 'xtables-lock', mountPath: '/run/xtables.lock' },
            { name: 'lib-modules', mountPath: '/lib/modules', readOnly: true },
            {
              name: token,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
            },
          ],
        },
      ],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      hostNetwork: true,
      nodeName: node,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 2000001000,
      priorityClassName: 'system-node-critical',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccount: 'kube-proxy',
      serviceAccountName: 'kube-proxy',
      terminationGracePeriodSeconds: 30,
      tolerations: TOLERATIONS,
      volumes: [
        { name: 'kube-proxy', configMap: { defaultMode: 420, name: 'kube-proxy' } },
        hostPath('xtables-lock', '/run/xtables.lock', 'FileOrCreate'),
        hostPath('lib-modules', '/lib/modules', ''),
        {
          name: token,
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              {
                configMap: {
                  name: 'kube-root-ca.crt',
                  items: [{ key: 'ca.crt', path: 'ca.crt' }],
                },
              },
              {
                downwardAPI: {
                  items: [
                    {
                      fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' },
                      path: 'namespace',
                    },
                  ],
                },
              },
            ],
          },
        },
      ],
    },
    status: {
      phase: 'Running',
      conditions: RUNNING_CONDITIONS.map(condition),
      containerStatuses: [
        {
          name: 'kube-proxy',
          containerID: `containerd://${hex(i, 64)}`,
          image: IMAGE,
          imageID: `registry.k8s.io/kube-proxy@sha256:${hex(i + 7, 64)}`,
          lastState: {},
          ready: true,
          restartCount: 0,
          started: true,
          state: { running: { startedAt: T } },
        },
      ],
      hostIP: ip,
      hostIPs: [{ ip }],
      podIP: ip,
      podIPs: [{ ip }],
      qosClass: 'BestEffort',
      startTime: T,
    },
  };
}
