// What the apiserver adds to a created Pod (defaults, generateName, the service-account token
// volume) and what the kubelet later reports for a Pod on a node (INTEGRATION.md 2.7).
import { randomInt } from 'node:crypto';
import type { KubeObject } from '../../../src/core/model.js';
import { apiTime } from './store.js';

type J = Record<string, unknown>;
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export const randomSuffix = (n = 5) =>
  Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

/** `<base(<=58 chars)><5 random chars>`, as the apiserver's SimpleNameGenerator makes names. */
export const generateName = (base: string) => `${base.slice(0, 58)}${randomSuffix()}`;

function pullPolicy(image: string): string {
  const tag = /:([^/:@]+)$/.exec(image)?.[1];
  return !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** The created Pod as the apiserver returns it: defaults filled in, status Pending. */
export function defaultPod(pod: KubeObject, namespace: string, name: string): KubeObject {
  const spec = { ...((pod['spec'] as J) ?? {}) };
  const tokenVolume = `kube-api-access-${randomSuffix()}`;
  const automount = spec['automountServiceAccountToken'] !== false;
  const containers = ((spec['containers'] as J[]) ?? []).map((c) => ({
    ...c,
    resources: c['resources'] ?? {},
    terminationMessagePath: c['terminationMessagePath'] ?? '/dev/termination-log',
    terminationMessagePolicy: c['terminationMessagePolicy'] ?? 'File',
    imagePullPolicy: c['imagePullPolicy'] ?? pullPolicy(String(c['image'] ?? '')),
    ...(automount
      ? {
          volumeMounts: [
            ...((c['volumeMounts'] as J[]) ?? []),
            {
              name: tokenVolume,
              readOnly: true,
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
            },
          ],
        }
      : {}),
  }));
  const tolerations = [...((spec['tolerations'] as J[]) ?? [])];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerations.some((t) => t['key'] === key || (t['operator'] === 'Exists' && !t['key']))) {
      tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    }
  }
  const volumes = [...((spec['volumes'] as J[]) ?? [])];
  if (automount) {
    volumes.push({
      name: tokenVolume,
      projected: {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [
                {
                  path: 'namespace',
                  fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' },
                },
              ],
            },
          },
        ],
        defaultMode: 420,
      },
    });
  }
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { ...pod.metadata, name, namespace },
    spec: {
      ...spec,
      volumes,
      containers,
      restartPolicy: spec['restartPolicy'] ?? 'Always',
      terminationGracePeriodSeconds: spec['terminationGracePeriodSeconds'] ?? 30,
      dnsPolicy: spec['dnsPolicy'] ?? 'ClusterFirst',
      serviceAccountName: spec['serviceAccountName'] ?? 'default',
      serviceAccount: spec['serviceAccountName'] ?? 'default',
      securityContext: spec['securityContext'] ?? {},
      schedulerName: spec['schedulerName'] ?? 'default-scheduler',
      tolerations,
      priority: 0,
      enableServiceLinks: spec['enableServiceLinks'] ?? true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: { phase: 'Pending', qosClass: 'BestEffort' },
  };
}

/** The conditions a kubelet sets True on a Pod whose containers all run, in its order. */
export const RUNNING_CONDITIONS = [
  'PodReadyToStartContainers',
  'Initialized',
  'Ready',
  'ContainersReady',
  'PodScheduled',
];

/** The Pod once the kubelet has started every container: Running, Ready, with IPs. */
export function runningPod(pod: KubeObject, hostIP: string): KubeObject {
  const spec = (pod['spec'] as J) ?? {};
  const now = apiTime();
  const podIP =
    spec['hostNetwork'] === true ? hostIP : `10.244.${randomInt(1, 254)}.${randomInt(2, 254)}`;
  const condition = (type: string) => ({
    type,
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: now,
  });
  return {
    ...pod,
    status: {
      phase: 'Running',
      conditions: RUNNING_CONDITIONS.map(condition),
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: now,
      containerStatuses: ((spec['containers'] as J[]) ?? []).map((c) => ({
        name: c['name'],
        state: { running: { startedAt: now } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: c['image'],
        imageID: '',
        containerID: `containerd://${randomSuffix(12)}`,
        started: true,
      })),
      qosClass: 'BestEffort',
    },
  };
}
