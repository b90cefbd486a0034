// kube-proxy's log of its userspace proxier (before 1.26): the KUBE-PORTALS-* / KUBE-NODEPORT-*
// chains it names are that mode's alone, so the log is said to be kube-proxy's, of that mode; the
// other proxiers' removal of its leftovers names them too, and is not said so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoRulesError, parseIptables } from '../../../src/core/dataplane/iptables/read/parse.js';

const foreign = (text: string) => {
  try {
    parseIptables(text, { file: 'p.txt' });
  } catch (e) {
    if (e instanceof NoRulesError) return e.foreign;
    throw e;
  }
  return undefined;
};

describe("kube-proxy's userspace log", () => {
  const cases: [string, string[], string | undefined][] = [
    [
      'its portal chains ensured, its periodic sync',
      [
        'I0203 20:11:28.001964   28164 proxier.go:356] Periodic sync',
        'I0203 20:11:28.002109   28164 iptables.go:186] running iptables -N [KUBE-PORTALS-CONTAINER -t nat]',
        'I0203 20:11:28.005315   28164 iptables.go:186] running iptables -C [PREROUTING -t nat -j KUBE-PORTALS-CONTAINER]',
        'I0203 20:11:28.008908   28164 iptables.go:186] running iptables -C [OUTPUT -t nat -j KUBE-PORTALS-HOST]',
      ],
      'kube-proxy-userspace-log',
    ],
    [
      "the iptables proxier removing the userspace proxier's leftovers",
      [
        'E0203 20:11:28.002109   28164 proxier.go:420] Error removing userspace rule: error checking rule: exit status 2: iptables -D [OUTPUT -t nat -j KUBE-PORTALS-HOST]',
        'I0203 20:11:28.005315   28164 iptables.go:186] running iptables -D [PREROUTING -t nat -j KUBE-PORTALS-CONTAINER]',
      ],
      'kube-proxy-log',
    ],
  ];
  for (const [name, lines, kind] of cases)
    it(`${name}: ${kind}`, () => assert.equal(foreign(lines.join('\n') + '\n'), kind));
});
