// Cilium's agent table, where Cilium replaces kube-proxy, as the Rules step names it and a
// person reads it (from the agent Pod: no command on the node).
import type { StateTraits } from '../mode-traits.js';
import { CILIUM_STEMS } from './agent/agent.js';

export const CILIUM_STATE: StateTraits = {
  word: 'Cilium',
  notObserved: 'rules-cilium-not-observed',
  what: () => "its Cilium agent's Service table",
  stem: () => CILIUM_STEMS.frontends,
  command: () => [],
  who: (node) => `Cilium replaces kube-proxy on ${node}`,
  sendsTo: 'backends',
  // one table holds both families
  perFamily: false,
  ownBackends: true,
  partReadNoMatch: true,
};
