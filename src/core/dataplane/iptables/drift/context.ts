// What the drift checks share: the node's rules, trees and objects (DriftContext), and the
// helpers that turn rules into evidence lines and sentences.
import type { DriftId, DriftSaid } from '../../drift.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import type { Ruleset, Table } from '../read/parse.js';
import type { Pod } from '../../../kube/objects.js';
import type { ServiceTree } from '../../trees.js';
import { hostPort } from '../../../ipv6.js';
import { kubectl, valid, w } from '../../../findings/next-command.js';

export interface MasqueradeDiff {
  service: string;
  want: string;
  got: string;
  expected: string[];
  actual: string[];
}

export interface DriftContext {
  node: string;
  /** Where the node's rules were read ("nodes/N/iptables-save.txt"): evidence says FILE:LINE. */
  source: string;
  exp: ExpectedRules;
  /** The node's whole rule set (the packet walk reads it). */
  actual: Ruleset;
  nat: Table;
  filter: Table | undefined;
  /** The node's Service trees by chain hash. */
  trees: Map<string, ServiceTree>;
  pods: Map<string, Pod[]>;
  /** The node's kube-proxy Pod, with what is wrong with it (not ready, crash-looping). */
  kubeProxy?: { pod: string; problem?: string; restarts: number };
  masquerade: MasqueradeDiff[];
  /** Missing chains a finding already names (jump-target-missing leaves them out). */
  reported: Set<string>;
  /** "<port name> internal|external": the packets kube-proxy drops for a traffic policy Local
   * that a rule it does not write lets on (their note is not said). */
  undropped: Set<string>;
  /** The shared chains' rules by address and by Service port, read when a finding first asks
   * (entryLines, verdictLines). */
  sharedLines?: SharedLines;
  add(f: IdSaid): void;
  /** An explanation of what the node does as designed (not drift), e.g. no local endpoint. */
  note(f: IdSaid, traffic?: 'internal' | 'external'): void;
}

/** A drift check's finding in its words, with its id. */
export type IdSaid = DriftSaid & { id: DriftId };

/** "-t nat -A ..." lines of a chain as the node has them. */
export function chainLines(table: Table | undefined, chain: string | undefined): string[] {
  const c = chain ? table?.chain(chain) : undefined;
  if (!table || !c) return [];
  return c.ruleIds.map((id) => `-t ${table.name} ${table.text(id)}`);
}

export const nat = (lines: { text: string }[]) => lines.map((l) => `-t nat ${l.text}`);
export const filterLines = (lines: { text: string }[]) => lines.map((l) => `-t filter ${l.text}`);
export const vip = (ip: string, port: number, proto: string) => `${hostPort(ip, port)}/${proto}`;

/** The command that finds kube-proxy's Pod on a node. */
export const kubeProxyPodOn = (node: string) =>
  kubectl(
    'kube-system',
    'get',
    'pods',
    '-l',
    'k8s-app=kube-proxy',
    '-o',
    'wide',
    '--field-selector',
    w`spec.nodeName=${valid.name(node)}`,
  );

/** What to do when kube-proxy on the node lags behind the API, and the log that says why. */
export function syncNext(c: DriftContext): Pick<DriftSaid, 'advice' | 'next' | 'notSynced'> {
  const kp = c.kubeProxy;
  if (kp?.problem)
    return {
      advice: `kube-proxy on ${c.node} is not running (Pod kube-system/${kp.pod}: ${kp.problem}); the node keeps the rules of its last successful sync. Find out why it stops.`,
      next: kubectl(
        'kube-system',
        'logs',
        valid.name(kp.pod),
        ...(kp.restarts ? ['--previous'] : []),
      ),
    };
  return {
    notSynced: true,
    advice: `kube-proxy on ${c.node} has not applied the current Services and ${c.exp.endpointsFrom.reads}: look for sync or iptables-restore errors in its log; deleting its Pod makes it resync everything.`,
    next: kp ? kubectl('kube-system', 'logs', valid.name(kp.pod)) : kubeProxyPodOn(c.node),
  };
}

/** kube-proxy on the node restarted (its Pod deleted: the DaemonSet makes a new one), which
 * rewrites every rule it owns. */
export function restartKubeProxy(c: DriftContext, why: string): Pick<DriftSaid, 'advice' | 'next'> {
  return {
    advice: `${why} Restart kube-proxy on ${c.node}: deleting its Pod makes the DaemonSet start a new one, which rewrites every rule.`,
    next: c.kubeProxy
      ? kubectl('kube-system', 'delete', 'pod', valid.name(c.kubeProxy.pod))
      : kubeProxyPodOn(c.node),
  };
}

interface SharedLines {
  /** nat KUBE-SERVICES rules by "address:port". */
  vip: Map<string, string[]>;
  /** filter REJECT / DROP rules by the Service port they name. */
  verdicts: Map<string, string[]>;
}

/** The node's shared-chain rules by address (nat KUBE-SERVICES) and by Service port (filter). */
function readSharedLines(c: DriftContext): SharedLines {
  const ix: SharedLines = { vip: new Map(), verdicts: new Map() };
  const push = (m: Map<string, string[]>, k: string, line: string) => {
    const list = m.get(k);
    if (list) list.push(line);
    else m.set(k, [line]);
  };
  const services = c.nat.chain('KUBE-SERVICES');
  for (const id of services?.ruleIds ?? []) {
    const d = c.nat.destination(id);
    if (d) push(ix.vip, `${d}:${c.nat.dport(id)}`, `-t nat ${c.nat.text(id)}`);
  }
  for (const chain of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-PROXY-FIREWALL']) {
    const f = c.filter;
    for (const id of (f && f.chain(chain)?.ruleIds) || []) {
      const name = /^(\S+) (?:has no|traffic not accepted)/.exec(f!.comment(id) ?? '')?.[1];
      if (name) push(ix.verdicts, name, `-t filter ${f!.text(id)}`);
    }
  }
  return ix;
}

/** The node's KUBE-SERVICES rules for the Service port's cluster IP and port. */
export function entryLines(c: DriftContext, sp: ExpectedServicePort): string[] {
  return (c.sharedLines ??= readSharedLines(c)).vip.get(`${sp.clusterIP}/32:${sp.port}`) ?? [];
}

/** The node's filter REJECT / DROP rules that name the Service port. */
export const verdictLines = (c: DriftContext, sp: ExpectedServicePort) =>
  (c.sharedLines ??= readSharedLines(c)).verdicts.get(sp.name) ?? [];
