// An agent whose release refuses cilium-config as read (agent.ts lbConfigRefused), in the words
// drift, trace, the Rules step and the TUI all use: with nothing of it read, it has not started
// and programs nothing; with its listing read, it ran on an earlier configuration.
import type { CiliumAgent } from './agent.js';

/** Why `agent` is said refused, worded for a node where its listing was `listed` or not;
 * undefined where its release takes cilium-config as read (or it started). */
export function refusedText(agent: CiliumAgent, listed: boolean): string | undefined {
  if (!agent.refused) return undefined;
  const who = `Cilium's agent ${agent.pod.namespace}/${agent.pod.name}`;
  return listed
    ? `${who} is not ready and would not start again with cilium-config as read; the listing read shows it ran (on an earlier configuration), so that listing is read as usual: ${agent.refused}`
    : `${who} does not start with its configuration, so it programs no Service there (what an earlier start left in its BPF maps was not read): ${agent.refused}`;
}
