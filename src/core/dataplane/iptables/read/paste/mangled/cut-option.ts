// A rule's last words cut inside its target's options: iptables-save and -S print each option
// whole, with its value, so a last word that is only the start of an option's name
// ("--set-xm"), or an option that takes a value with none after it ("--to-destination"), is
// where the paste was cut.

/** The options iptables-extensions gives the targets kube-proxy's rules use: true where the
 * option takes a value. */
const TARGET_OPTIONS: Record<string, Record<string, boolean>> = {
  MARK: {
    'set-xmark': true,
    'set-mark': true,
    'and-mark': true,
    'or-mark': true,
    'xor-mark': true,
  },
  DNAT: { 'to-destination': true, random: false, persistent: false },
  SNAT: { 'to-source': true, random: false, 'random-fully': false, persistent: false },
  MASQUERADE: { 'to-ports': true, random: false, 'random-fully': false },
  REDIRECT: { 'to-ports': true, random: false },
  REJECT: { 'reject-with': true },
  LOG: {
    'log-level': true,
    'log-prefix': true,
    'log-tcp-sequence': false,
    'log-tcp-options': false,
    'log-ip-options': false,
    'log-uid': false,
    'log-macdecode': false,
  },
};

/** The values libxt_MARK prints: a mark, and with --set-xmark its mask after "/"
 * (`--set-xmark 0x4000/0x4000`), each in hex: a value that stops before its digits is cut. */
const MARK_VALUE = /^0x[\da-f]+(?:\/0x[\da-f]+)?$/i;

/** Why a rule's text ends cut inside its target's options, or undefined where it does not. */
export function cutTargetOption(spec: string): string | undefined {
  const mark = / -j MARK .*--([a-z-]+) (\S+)$/.exec(spec);
  if (mark && TARGET_OPTIONS.MARK![mark[1]!] && !MARK_VALUE.test(mark[2]!))
    return `MARK's --${mark[1]} cut inside its value ("${mark[2]}": iptables prints a mark and its mask whole, in hex)`;
  const m = / -j ([A-Z]+)((?: \S+)*?) (--[a-z-]+)$/.exec(spec);
  const options = m ? TARGET_OPTIONS[m[1]!] : undefined;
  if (!m || !options) return undefined;
  const name = m[3]!.slice(2);
  const takesValue = options[name];
  if (takesValue) return `${m[1]} without the value of its --${name}`;
  if (takesValue === false) return undefined;
  return Object.keys(options).some((o) => o.startsWith(name))
    ? `a rule cut inside its ${m[1]} option's name ("--${name}")`
    : undefined;
}

/** kube-proxy writes each endpoint's DNAT with its port (`--to-destination 10.244.1.7:80`): a
 * KUBE-SEP rule ending in an address without one stops short; why, or undefined. */
export function cutDnatPort(spec: string): string | undefined {
  const m = /^KUBE-SEP-\S+ .* -j DNAT .*--to-destination (\S+)$/.exec(spec);
  if (!m || /^(?:\[[^\]]+\]|[^:\s]+):\d+$/.test(m[1]!)) return undefined;
  return `DNAT to ${m[1]} without the port kube-proxy writes after every endpoint's address`;
}
