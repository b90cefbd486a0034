// A typed rule printed back in iptables-save's canonical form.
import type { Negatable, Option, Rule } from './rule.js';

/** Options whose values iptables-save always quotes. */
const ALWAYS_QUOTED = new Set(['comment', 'log-prefix', 'nflog-prefix']);

function printValue(optName: string, v: string, quoted: boolean): string {
  if (quoted || ALWAYS_QUOTED.has(optName) || v === '' || /[\s"'\\]/.test(v)) {
    return `"${v.replace(/(["\\])/g, '\\$1')}"`;
  }
  return v;
}

function printOptions(options: Option[]): string {
  let out = '';
  for (const o of options) {
    out += o.negated ? ` ! --${o.name}` : ` --${o.name}`;
    // iptables-save prints nfacct's name after two spaces
    if (o.name === 'nfacct-name') out += ' ';
    o.values.forEach((v, i) => (out += ' ' + printValue(o.name, v, o.quoted[i] ?? false)));
  }
  return out;
}

/** The rule in iptables-save's canonical form ("-A CHAIN ..."). */
export function printRule(rule: Rule): string {
  const neg = (x: Negatable) => (x.negated ? '! ' : '');
  let out = `-A ${rule.chain}`;
  if (rule.source) out += ` ${neg(rule.source)}-s ${rule.source.cidr}`;
  if (rule.destination) out += ` ${neg(rule.destination)}-d ${rule.destination.cidr}`;
  if (rule.inInterface) out += ` ${neg(rule.inInterface)}-i ${rule.inInterface.name}`;
  if (rule.outInterface) out += ` ${neg(rule.outInterface)}-o ${rule.outInterface.name}`;
  if (rule.protocol) out += ` ${neg(rule.protocol)}-p ${rule.protocol.name}`;
  if (rule.fragment) out += ` ${neg(rule.fragment)}-f`;
  for (const m of rule.matches) out += ` -m ${m.module}${printOptions(m.options)}`;
  if (rule.counters) out += ` -c ${rule.counters.packets} ${rule.counters.bytes}`;
  if (rule.target)
    out += ` ${rule.target.goto ? '-g' : '-j'} ${rule.target.name}${printOptions(rule.target.options)}`;
  return out;
}
