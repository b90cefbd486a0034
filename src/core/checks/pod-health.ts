// Why a Pod is not ready, in the words `kubectl describe pod` would make a person hunt for:
// its phase, the Ready condition, each container's state and restarts, the readiness probe.
import { read } from '../findings/evidence.js';
import type { Evidence } from '../model.js';
import type { Pod, ContainerProbe } from '../kube/objects.js';

export function probeSpec(p: ContainerProbe): string {
  switch (p.kind) {
    case 'httpGet':
      return `httpGet ${p.path ?? '/'} on port ${p.port}`;
    case 'tcpSocket':
      return `tcpSocket on port ${p.port}`;
    case 'exec':
      return `exec ${(p.command ?? []).join(' ')}`;
    case 'grpc':
      return `grpc on port ${p.port}`;
    default:
      return 'a probe';
  }
}

export function podReady(pod: Pod): boolean {
  return pod.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

export interface NotReady {
  /** One phrase: "its readiness probe (httpGet /healthz on port 80) is failing ...". */
  reason: string;
  /** A few words for a title: "readiness probe failing", "CrashLoopBackOff". */
  short: string;
  /** The readiness probe is what keeps it out (the container runs). */
  probeFailing: boolean;
  evidence: Evidence[];
  /** `logs --previous` is the better next step when it crashed. */
  crashed: boolean;
}

export function whyNotReady(pod: Pod): NotReady {
  const evidence: string[] = [];
  const ready = pod.conditions.find((c) => c.type === 'Ready');
  const scheduled = pod.conditions.find((c) => c.type === 'PodScheduled');
  evidence.push(
    `Pod ${pod.name}: phase ${pod.phase}${pod.nodeName ? ` on ${pod.nodeName}` : ''}${ready ? `, Ready=${ready.status}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}` : ''}`,
  );
  let reason: string | undefined;
  let short = 'not ready';
  let crashed = false;
  let probeFailing = false;
  if (pod.deleting) [reason, short] = ['it is being deleted (terminating)', 'terminating'];
  if (!reason && scheduled?.status === 'False') {
    reason = `it is not scheduled to a node (${scheduled.reason ?? 'Unschedulable'}${scheduled.message ? `: ${scheduled.message}` : ''})`;
    short = 'not scheduled';
  }
  for (const c of pod.containers) {
    const st = pod.containerStatuses.find((s) => s.name === c.name);
    if (!st) continue;
    const lastReason =
      st.lastState?.reason && st.lastState.reason !== 'Error' ? `: ${st.lastState.reason}` : '';
    const last =
      st.lastState?.kind === 'terminated'
        ? `, last exit code ${st.lastState.exitCode ?? '?'}${lastReason}`
        : '';
    evidence.push(
      `container ${c.name}: ${st.state.kind}${st.state.reason ? ` (${st.state.reason})` : ''}, ready=${st.ready}, restarts ${st.restartCount}${last}`,
    );
    if (c.readinessProbe)
      evidence.push(`container ${c.name} readinessProbe: ${probeSpec(c.readinessProbe)}`);
    if (reason || st.ready) continue;
    if (st.state.kind === 'waiting') {
      crashed = st.state.reason === 'CrashLoopBackOff';
      short = st.state.reason ?? 'waiting';
      reason = crashed
        ? `its container ${c.name} keeps crashing (CrashLoopBackOff after ${st.restartCount} restarts${last})`
        : `its container ${c.name} is waiting: ${st.state.reason ?? 'not started'}${st.state.message ? ` (${st.state.message})` : ''}`;
    } else if (st.state.kind === 'terminated') {
      crashed = true;
      short = `exited (${st.state.exitCode ?? '?'})`;
      reason = `its container ${c.name} exited (${st.state.reason ?? 'terminated'}, exit code ${st.state.exitCode ?? '?'})`;
    } else if (st.state.kind === 'running' && c.readinessProbe) {
      probeFailing = true;
      short = 'readiness probe failing';
      reason = `its readiness probe (${probeSpec(c.readinessProbe)}) is failing while container ${c.name} runs`;
    } else if (st.state.kind === 'running') {
      reason = `its container ${c.name} runs but is not ready`;
    }
  }
  return {
    reason: reason ?? `it is ${pod.phase}, not Ready`,
    short,
    evidence: evidence.map((l) => read(l, `Pod ${pod.namespace}/${pod.name}`)),
    crashed,
    probeFailing,
  };
}
