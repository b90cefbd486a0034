// A debug Pod's state as the run reads it: running, never going to, or no longer the Pod this run
// made.
import type { Pod } from '../../../core/kube/objects.js';
import type { KubeObject } from '../../../core/model.js';
import { KubeApiError } from '../../kube/errors.js';
import { CONTAINER } from './manifest.js';

/** Why a Pod name no longer means the Pod this run made. */
export const GONE = {
  deleted: 'was deleted by someone else',
  replaced: 'was replaced by another Pod of the same name',
} as const;

/** Whether a renewal's refusal says the Pod is gone: 404, or the uid in the patch refused (422). */
export function renewalLoss(e: unknown): string | undefined {
  if (!(e instanceof KubeApiError)) return undefined;
  if (e.reason === 'not-found') return GONE.deleted;
  // the API server keeps metadata.uid immutable: a patch naming another uid is Invalid
  if (e.code === 422 && /metadata\.uid/.test(e.message)) return GONE.replaced;
  return undefined;
}

const CANNOT_START =
  /^(ErrImagePull|ImagePullBackOff|InvalidImageName|ErrImageNeverPull|CreateContainerConfigError|CreateContainerError|RunContainerError)$/;

/** Why a debug Pod will never run, or undefined while it still may. */
export function startFailure(p: Pod): string | undefined {
  if (p.phase === 'Failed' || p.phase === 'Succeeded')
    return `it ended (${p.phase}${p.containerStatuses[0]?.state.reason ? `, ${p.containerStatuses[0].state.reason}` : ''})`;
  const waiting = p.containerStatuses.find((c) => CANNOT_START.test(c.state.reason ?? ''));
  if (waiting)
    return `${waiting.state.reason}${waiting.state.message ? ` (${waiting.state.message})` : ''}`;
  return undefined;
}

export const running = (p: Pod) =>
  p.phase === 'Running' &&
  p.containerStatuses.some((c) => c.name === CONTAINER && c.state.kind === 'running');

/** How long the node's kubelet may take to acknowledge a Pod bound to it: a running kubelet
 * writes status.startTime ("acknowledged by the Kubelet", before any image pull) within a second
 * or two; without it no kubelet is taking Pods there (a Node that exists in the API only, a
 * kubelet down while its Node still reads Ready), and waiting longer changes nothing. */
export const KUBELET_ACK_MS = 15_000;

/** Whether a kubelet acknowledged the Pod (status.startTime). */
export const acknowledged = (raw: KubeObject) =>
  typeof (raw['status'] as { startTime?: unknown } | undefined)?.startTime === 'string';
