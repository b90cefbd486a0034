// Whether the agent runs an address's family (enable-ipv4, enable-ipv6), where that may not be
// known (a refused cilium-config, agent.ts notKnown): its frontends are then expected, marked.
import { familyOf } from '../../../ipv6.js';
import { knows } from '../agent/agent.js';
import type { CiliumExpectOptions } from './expected.js';

/** The family of `ip` where whether the agent runs it is not known. */
export const familyNotKnown = (
  o: Pick<CiliumExpectOptions, 'notKnown'>,
  ip: string,
): 'IPv4' | 'IPv6' | undefined => {
  const family = familyOf(ip) === 'IPv6' ? 'IPv6' : 'IPv4';
  return knows(o, family === 'IPv6' ? 'ipv6' : 'ipv4') ? undefined : family;
};

/** Whether the agent may run `ip`'s family: on, or not known (then its frontends are marked). */
export const familyOn = (o: Pick<CiliumExpectOptions, 'notKnown' | 'ipv4' | 'ipv6'>, ip: string) =>
  familyNotKnown(o, ip) !== undefined || (familyOf(ip) === 'IPv6' ? o.ipv6 : o.ipv4);
