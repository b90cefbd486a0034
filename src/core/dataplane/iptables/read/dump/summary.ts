// What the paste held besides the dump, said once at the end of the pass: lines read in bulk
// (prefixes, repeats, other tools' listings), one log merged, other kube-proxy modes.
import {
  foreignText,
  isHost,
  isKubectl,
  type ForeignKind,
  type HostKind,
} from '../paste/other-lines/foreign-kinds.js';
import { isLog, type LogKind } from '../paste/other-lines/logs.js';
import type { ParserState } from './parser-state.js';
import type { Table } from '../table.js';

/** One warning for each kind of line that is read in bulk: prefixes, repeats, listings. */
export function summarise(state: ParserState): void {
  const list = (lines: number[]) =>
    lines.length <= 8 ? lines.join(', ') : `${lines.slice(0, 8).join(', ')} ... ${lines.at(-1)}`;
  if (state.prefixed.length > 0)
    state.warn(
      'prefix',
      `${state.prefixed.length} line${state.prefixed.length === 1 ? '' : 's'} had a prefix before the dump line (grep -n / grep -H / a prompt): stripped and read (line${state.prefixed.length === 1 ? '' : 's'} ${list(state.prefixed)})`,
      state.prefixed[0]!,
      state.prefixed,
    );
  // a diff of rules (a test's expectation, a review): its new side is read, the old one is not
  const [added, removed] = [state.diffAdded, state.diffRemoved];
  if (added.length > 0)
    state.warn(
      'prefix',
      `a diff: the rules it adds ("+" before each) are read without the "+", with its context lines, as its new side (line${added.length === 1 ? '' : 's'} ${list(added)})${removed.length > 0 ? `; the rule line${removed.length === 1 ? '' : 's'} it removes ("-") ${removed.length === 1 ? 'is' : 'are'} not read (line${removed.length === 1 ? '' : 's'} ${list(removed)})` : ''}`,
      added[0]!,
      added,
    );
  if (state.logged.length > 0)
    state.warn(
      'log',
      `rules kube-proxy logged (the input it gave iptables-restore), read after the log's prefix: what kube-proxy wrote or tried to write, not read back from the node (its log says whether iptables-restore took them; \`iptables-save\` there shows what the node holds) (line${state.logged.length === 1 ? '' : 's'} ${list(state.logged)})`,
      state.logged[0]!,
      state.logged,
    );
  const { copies, reruns } = state.ruleRepeats;
  if (copies.length > 0)
    state.warn(
      'duplicate',
      `${copies.length} rule line${copies.length === 1 ? '' : 's'} repeat${copies.length === 1 ? 's' : ''} an earlier one (pasted twice?): read once (line${copies.length === 1 ? '' : 's'} ${list(copies)})`,
      copies[0]!,
      copies,
    );
  if (reruns.length > 0)
    state.warn(
      'duplicate',
      `${reruns.length} rule line${reruns.length === 1 ? '' : 's'} repeat${reruns.length === 1 ? 's' : ''} the rules an earlier command printed (the command run again; where counters are printed, only they may differ): the same rule${reruns.length === 1 ? '' : 's'}, read once (line${reruns.length === 1 ? '' : 's'} ${list(reruns)})`,
      reruns[0]!,
      reruns,
    );
  // -L's rows among rules read: those lines are -L's, not the paste's kind
  const ruled = [...state.tables, state.section].some((t) => (t?.ruleCount ?? 0) > 0);
  for (const [kind, lines] of state.foreign) {
    const at = `line${lines.length === 1 ? '' : 's'} ${list(lines)}`;
    state.warn(
      'foreign',
      kind === 'iptables-list' && ruled
        ? `${at}: a row of \`iptables -L\` (its target, prot, opt, source and destination columns) among rules as iptables-save and -S print them: not read, the rules around it are`
        : `${at} not read: ${foreignText(kind, unopenedBy(state, kind), ipvsNamed(state, kind))}`,
      lines[0]!,
      lines,
    );
  }
}

/** The tables the lines of `kind` (iptables failing to open one) name, in the order named. */
export function unopenedBy(state: ParserState, kind: ForeignKind): string[] {
  return [...(state.unopened.get(kind) ?? [])];
}

/** The IPVS proxier's chains kube-proxy's log (the lines of `kind`) names: none where it says
 * it uses another proxier (its iptables proxier removes IPVS leftovers by name). */
export function ipvsNamed(state: ParserState, kind: ForeignKind): string[] {
  if (kind !== 'kube-proxy-log') return [];
  if (state.proxierSaid !== undefined && state.proxierSaid !== 'ipvs') return [];
  return [...state.ipvsChains];
}

/** A component's log lines whose file or words name no component (shared_informer.go,
 * iptables.go) are of the log the paste's other lines name: one log, said once. */
export function mergeLogs(state: ParserState): void {
  // kube-proxy's lines that name no proxier are of the userspace one its other lines name
  const userspace = state.foreign.get('kube-proxy-userspace-log');
  const plain = state.foreign.get('kube-proxy-log');
  if (userspace && plain) {
    state.foreign.set(
      'kube-proxy-userspace-log',
      [...userspace, ...plain].sort((a, b) => a - b),
    );
    state.foreign.delete('kube-proxy-log');
  }
  const other = state.foreign.get('other-log');
  const named = [...state.foreign]
    .filter(([kind]) => isLog(kind) && kind !== 'other-log')
    .sort((a, b) => b[1].length - a[1].length)[0];
  if (!other || !named) return;
  state.foreign.set(
    named[0],
    [...named[1], ...other].sort((a, b) => a - b),
  );
  state.foreign.delete('other-log');
}

/** The logs among the lines (kubelet's, kube-proxy's ..., or one whose lines name none), with their lines. */
export function namedLogs(state: ParserState): { kind: LogKind | HostKind; lines: number[] }[] {
  return [...state.foreign]
    .filter((e): e is [LogKind | HostKind, number[]] => isLog(e[0]) || isHost(e[0]))
    .map(([kind, lines]) => ({ kind, lines }));
}

/** An `ipset list` that names one of kube-proxy's sets is its IPVS mode's, header lines and all:
 * one listing, said once. */
export function mergeIpsets(state: ParserState): void {
  const own = state.foreign.get('kube-proxy-ipset');
  const other = state.foreign.get('ipset');
  if (!own || !other) return;
  state.foreign.set(
    'kube-proxy-ipset',
    [...own, ...other].sort((a, b) => a - b),
  );
  state.foreign.delete('ipset');
}

/** A nat table of kube-proxy's IPVS mode: its KUBE-SERVICES matches the KUBE-CLUSTER-IP ipset, or
 * its own chains are declared or jumped to (two KUBE-SERVICES rules quoted alone). */
export function ipvsModeNat(nat: Table): boolean {
  const services = nat.indexOf('KUBE-SERVICES');
  for (let k = 0; services >= 0 && k < Math.min(20, nat.ruleCountOf(services)); k++)
    if (nat.text(nat.ruleIdOf(services, k)).includes('--match-set KUBE-CLUSTER-IP')) return true;
  const ipvsChains = ['KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER', 'KUBE-LOOP-BACK'];
  return ipvsChains.some((n) => nat.indexOf(n) >= 0) || nat.jumpsTo(ipvsChains);
}

/** Other kube-proxy modes whose rules an iptables dump shows only in part: said once each. */
export function proxyModes(state: ParserState): void {
  const nat = state.tables.find((t) => t.name === 'nat');
  if (!nat) return;
  const has = (...names: string[]) => names.some((n) => nat.indexOf(n) >= 0);
  if (ipvsModeNat(nat)) {
    let leftovers = 0;
    for (let c = 0; c < nat.chainCount; c++) if (nat.kindOf(c) !== undefined) leftovers++;
    state.warn(
      'mode',
      `IPVS mode: the Services are in IPVS, read them with \`ipvsadm -Ln\`${leftovers > 0 ? `; the ${leftovers} KUBE-SVC/KUBE-SEP chains here are leftovers from iptables mode` : ''}`,
      null,
    );
  }
  // the portal chains, declared or only jumped to from the built-in chains (a listing's segment)
  const jumped = (...names: string[]) => nat.jumpsTo(names, ['PREROUTING', 'OUTPUT']);
  const portals = ['KUBE-PORTALS-CONTAINER', 'KUBE-PORTALS-HOST', 'KUBE-NODEPORT-CONTAINER'];
  if (has(...portals) || jumped(...portals))
    state.warn(
      'mode',
      'userspace mode: kube-proxy itself proxies each Service on a port of its own (the portal rules send traffic there); the endpoints are not in iptables',
      null,
    );
}

/** The other tool's listing most of the input was, for the error when nothing else was; none
 * where such lines are a few among prose (a README's "}" is no nft listing). */
export function mainForeign(state: ParserState): ForeignKind | undefined {
  const seen = [...state.foreign.values()].reduce((n, lines) => n + lines.length, 0);
  if (seen * 4 < state.nonBlank) return undefined;
  // nft's errors quote the rules it refused: what the paste is, whatever they quote
  if (state.foreign.has('nft-error')) return 'nft-error';
  // nft's crash in place of a listing: what the paste is, whatever else was typed around it
  if (state.foreign.has('nft-crash')) return 'nft-crash';
  // nft refusing -j: why a JSON listing could not be printed, whatever else was typed around it
  if (state.foreign.has('nft-no-json')) return 'nft-no-json';
  // iptables-nft refusing the table asked for: why the paste holds no rule, whatever logs it
  if (state.foreign.has('iptables-nft-incompatible')) return 'iptables-nft-incompatible';
  // kubectl's output is the API server's side of what a node's listing beside it shows: that
  // listing (not a log) is what the paste is, however many rows kubectl printed
  const kinds = [...state.foreign.keys()];
  const node = kinds.filter((k) => !isKubectl(k));
  let best: ForeignKind | undefined;
  for (const kind of node.some((k) => !isLog(k)) ? node : kinds) {
    if (kind === 'kube-proxy-nft') return kind; // its tables sit among iptables-nft's
    if (!best || state.foreign.get(kind)!.length > state.foreign.get(best)!.length) best = kind;
  }
  // a node's own views (ps, sysfs) name the paste only where they are most of it
  if (best && isHost(best) && state.foreign.get(best)!.length * 2 <= state.nonBlank)
    return undefined;
  return best;
}
