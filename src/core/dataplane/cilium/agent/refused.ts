// An agent whose release refuses cilium-config as read (lb-config.ts lbConfigRefused), in the
// words drift, trace, the Rules step and the TUI all use: not ready with nothing of it read, it has
// not started and programs nothing; with its listing read, it ran on an earlier configuration;
// with its readiness not read, only that a start would stop is said.
import { read, unseen } from '../../../findings/evidence.js';
import type { Evidence } from '../../../model.js';
import { kubectl, valid, type NextCommand } from '../../../findings/next-command.js';
import { hasPod, type AgentPod, type CiliumAgent } from './agent.js';

/** Why a setting only cilium-config gives (agent.ts notKnown) is not known. */
export const SETTING_NOT_KNOWN =
  'not known: cilium-config as read is refused, so the agent runs on an earlier configuration kdebug did not read';

/** The agent refuses cilium-config as read and is known not ready: it has not started. */
export const notStarted = (agent: CiliumAgent) =>
  agent.refused !== undefined && agent.readiness?.ready === false;

/** Whether it is known that the agent started: a listing read (without failure) shows it ran,
 * else its readiness says. */
export const startKnown = (agent: CiliumAgent, listed: boolean) =>
  listed || agent.readiness !== undefined;

/** Why `agent` is said refused, worded for a node where its listing was `listed` (read without
 * failure) or not; undefined where its release takes cilium-config as read (or it started). */
export function refusedText(agent: CiliumAgent, listed: boolean): string | undefined {
  // an agent known from its recorded status alone answered it: it started, so none is refused
  if (!agent.refused || !agent.pod) return undefined;
  const who = `Cilium's agent ${agent.pod.namespace}/${agent.pod.name}`;
  if (listed)
    return `${who} ${agent.readiness !== undefined ? 'is not ready and' : '(its readiness not read)'} would not start again with cilium-config as read; the listing read shows it ran (on an earlier configuration), so that listing is read as usual: ${agent.refused}`;
  return startKnown(agent, false)
    ? `${who} does not start with its configuration, so it programs no Service there (what an earlier start left in its BPF maps was not read): ${agent.refused}`
    : `cilium-config as read would stop ${who} at a start; whether it started is not known (neither its container's status nor its Pod's Ready condition was read): ${agent.refused}`;
}

/** What drift and the Rules step say of a refused agent: why, what that rests on, and the log
 * of its last start. */
export interface Refusal {
  why: string;
  evidence: Evidence[];
  next?: NextCommand;
}

/** `agent`'s refusal (refusedText), where its release refuses cilium-config as read. */
export function refusal(agent: CiliumAgent, listed: boolean): Refusal | undefined {
  const why = refusedText(agent, listed);
  if (!why || !hasPod(agent)) return undefined;
  const next = previousLog(agent);
  return { why, evidence: refusedEvidence(agent), ...(next ? { next } : {}) };
}

/** What the refusal rests on: the agent's readiness as read (or that it was not), and
 * cilium-config as its release reads it. */
function refusedEvidence(agent: AgentPod): Evidence[] {
  const pod = `Pod ${agent.pod.namespace}/${agent.pod.name}`;
  return [
    agent.readiness
      ? read(agent.readiness.said, pod)
      : unseen(
          `${pod}: no status of container ${agent.container} and no Ready condition read`,
          agent.pod.nodeName,
        ),
    read(
      `ConfigMap ${agent.configMap}, as Cilium ${agent.version} reads it`,
      `ConfigMap ${agent.configMap}`,
    ),
  ];
}

/** The log of the agent's last start, which says why it stopped (none where a name is hostile). */
const previousLog = (agent: AgentPod): NextCommand | undefined =>
  kubectl(
    agent.pod.namespace,
    'logs',
    valid.name(agent.pod.name),
    '-c',
    valid.name(agent.container),
    '--previous',
  );
