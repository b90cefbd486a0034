// What one packet walk concludes, in cluster words: what the destination is, whether some
// outcome refuses or drops the packet (exit 1), which DNATs reach no captured Pod (stale rules),
// and why a packet no Service rule matched gets no answer (the ping-to-a-ClusterIP question).
import type { ClusterView } from '../../kube/objects.js';
import { shareText, type MatchedRule, type TraceOutcome, type TraceResult } from './trace.js';
import { percent } from '../../model.js';
import { kdebug, valid, type NextCommand } from '../../findings/next-command.js';
import type { ServiceTrees } from '../trees.js';
import { nodePortNotInApi, type PortNotInApi } from './stale-port.js';

/** Where the read of the node's rules stopped (a dump cut short): the walk holds for what was
 * read, and says nothing of the rules past the stop. */
export interface ReadStop {
  file: string;
  line: number | null;
  /** The reader's words: "the dump looks cut short after line 132: table nat has no COMMIT ..." */
  why: string;
  /** Per outcome, the chains it entered that the dump holds in part. */
  partly: string[][];
  /** Per outcome, how many of its matched rules it is known to match: those after it fell off a
   * chain held in part match only if the rules past the cut let it on unchanged. */
  known: number[];
  /** Per outcome, how its walk came to what the cut hid, a clause ("it jumps to chain ..."),
   * where the walk stopped there (nftables); unset: it fell through `partly`'s chains. */
  reached?: (string | undefined)[];
}

/** A walk and where the read of the rules it went through stopped, if it did. */
export interface Traced {
  result: TraceResult;
  stop?: ReadStop;
}

export interface TraceAnswer {
  result: TraceResult;
  node: string;
  /** What the destination address is, when kdebug knows ("the ClusterIP of Service ..."). */
  destinationIs?: string;
  /** Outcome indexes whose DNAT target no captured Pod has (said only when Pods were captured). */
  stale: number[];
  /** Some outcome is REJECT or DROP: the traffic asked about is refused somewhere. */
  blocked: boolean;
  /** Why nothing answers a packet no Service rule matched (a ClusterIP's other protocols, ping). */
  unmatched?: string;
  /** What shows the cause of `unmatched` (kdebug drift on the node), resolved as the run was. */
  next?: NextCommand;
  /** Nothing answers it: no rule took it to an endpoint, and the node itself does not answer. */
  unanswered: boolean;
  /** The rules were not wholly read: where the read stopped; no verdict rests on what lies past. */
  stop?: ReadStop;
  /** The node port that translated the packet is, in the node's rules, a Service port's that the
   * API no longer gives it (stale rules): the node's view beside the API's. */
  notInApi?: PortNotInApi[];
}

/** How the destination was changed, in the words of what changed it: Cilium's socket and tc hooks
 * translate a frontend to a backend in BPF; kube-proxy's rules (and IPVS) DNAT. */
export const translatedBy = (o: TraceOutcome) =>
  o.rules.some((r) => r.table === 'cilium') ? 'translated to' : 'DNAT to';

/** A walk of Cilium's frontends, not of kube-proxy's rules: its own words for what it met. */
const cilium = (o: TraceOutcome) => o.rules.find((r) => r.table === 'cilium')?.rule;

/** The exit code's question: does the packet reach an endpoint (or the node) as kube-proxy
 * intends? Refused, dropped, unanswered, sent to a Pod that is gone or by a port the API no
 * longer has: no. */
export const traceFails = (a: TraceAnswer) =>
  a.blocked || a.unanswered || a.stale.length > 0 || (a.notInApi?.length ?? 0) > 0;

/** The walk in cluster words; `trees`, the node's Service trees, tell whose node port took it. */
export function traceAnswer(
  result: TraceResult,
  view: ClusterView,
  node: string,
  stop?: ReadStop,
  trees?: ServiceTrees,
): TraceAnswer {
  const dst = result.packet.dst;
  const captured = view.pods.flatMap((p) =>
    p.podIPs.length > 0 ? p.podIPs : p.podIP ? [p.podIP] : [],
  );
  const pods = new Set(captured);
  const stale = result.outcomes.flatMap((o, i) => {
    // "10.244.0.3:80" or "[fd00::3]:80"
    const ip = o.dnat?.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    return ip !== undefined && captured.length > 0 && !pods.has(ip) ? [i] : [];
  });
  // a refusal counts where no chain on its way was cut: the rules past the cut may come first
  const blocked = result.outcomes.some(
    (o, i) => (o.verdict === 'REJECT' || o.verdict === 'DROP') && !stop?.partly[i]?.length,
  );
  const notInApi = nodePortNotInApi(result, trees, view);
  const answer: TraceAnswer = {
    result,
    node,
    stale,
    blocked,
    unanswered: false,
    ...(stop ? { stop } : {}),
    // what shows the node's rules against the API's: its drift (entry-stale)
    ...(notInApi.length > 0
      ? { notInApi, next: kdebug(['drift', '--node', valid.name(node)]) }
      : {}),
  };
  for (const s of view.services) {
    const kind = s.clusterIPs.includes(dst)
      ? 'the ClusterIP'
      : s.externalIPs.includes(dst)
        ? 'an external IP'
        : s.loadBalancerIPs.includes(dst)
          ? 'a load-balancer IP'
          : undefined;
    if (!kind) continue;
    const ports = s.ports.map((p) => `${p.protocol.toLowerCase()} port ${p.port}`);
    answer.destinationIs = `${kind} of Service ${s.namespace}/${s.name} (${ports.join(', ')})`;
    const { protocol, dport } = result.packet;
    // the packet is for one of the Service's ports: no rule means none was written here
    const servicePort = s.ports.some(
      (p) => p.protocol.toLowerCase() === protocol && p.port === dport,
    );
    const unchanged = result.outcomes.find((o) => o.destination === null);
    const translated = result.outcomes.some((o) => o.dnat);
    // a packet no rule read took may be taken past the cut: where the read stopped, no verdict
    if (stop && unchanged) {
      answer.unmatched = cutAnswer(
        result,
        `${protocol}${dport !== undefined ? ` port ${dport}` : ''} of ${dst}`,
        node,
        stop,
      );
      return answer;
    }
    // kube-proxy's Service rules live in the nat table: without it, no rule is no answer
    if (unchanged && result.tablesNotRead?.includes('nat')) {
      answer.unmatched = `The dump holds no nat table, where kube-proxy writes its Service rules: whether it wrote this Service on node ${node} was not read.`;
      return answer;
    }
    // IPVS mode binds the address to the node (kube-ipvs0): it is delivered there, not lost
    // only the node answering a ping to its own kube-ipvs0 address is an answer
    answer.unanswered =
      unchanged !== undefined &&
      ports.length > 0 &&
      !(unchanged.delivery === 'local' && !servicePort && protocol === 'icmp');
    if (ports.length > 0 && unchanged?.delivery === 'local')
      answer.unmatched = servicePort
        ? `${dst} is an address of node ${node} (kube-ipvs0), and no virtual server takes ${protocol} port ${dport} there: kube-proxy has not programmed this Service on node ${node} (drift shows what it lacks), so the node itself gets the packet and nothing of the Service answers.`
        : `${dst} is an address of node ${node} (IPVS mode binds it to kube-ipvs0), and its virtual servers take only ${ports.join(', ')}: the node itself gets the packet${protocol === 'icmp' ? ' and answers the ping. This is why ping to a ClusterIP answers in IPVS mode: the answer comes from the node, not from a Pod.' : ', where nothing of the Service listens.'}`;
    else if (ports.length > 0 && unchanged && servicePort && fellThrough(unchanged))
      answer.unmatched = fallThroughText(result, fellThrough(unchanged)!, dst, node);
    else if (servicePort && result.refusedBeforeDnat && !translated)
      answer.unmatched = refusedText(result.refusedBeforeDnat, result, node);
    else if (servicePort && result.servicesSkipped && !translated)
      answer.unmatched = skippedText(result.servicesSkipped, result, dst, node);
    else if (servicePort && result.entryMissing && !translated)
      answer.unmatched = entryMissingText(result.entryMissing, result, dst, node);
    else if (ports.length > 0 && unchanged && cilium(unchanged))
      answer.unmatched = servicePort
        ? `No frontend of Cilium's agent took ${protocol} port ${dport} of ${dst}, a port of the Service: ${cilium(unchanged)}. Cilium's agent has not written this Service port on node ${node} (drift shows what it lacks). The packet goes on to ${dst} unchanged, and nothing answers it.`
        : `No frontend of Cilium's agent took it: Cilium load-balances only ${ports.join(', ')} of ${dst}. The packet goes on to ${dst} unchanged; Cilium binds a Service address to no interface, so nothing answers it (this is why ping to a ClusterIP fails while curl to its port works).`;
    else if (ports.length > 0 && unchanged)
      answer.unmatched = servicePort
        ? `No rule matched ${protocol} port ${dport} of ${dst}, a port of the Service: kube-proxy has not written this Service on node ${node} (drift shows what it lacks). The packet goes on to ${dst} unchanged, and nothing answers it.`
        : `No Service rule matched: the rules for ${dst} only match ${ports.join(', ')}. The packet goes on to ${dst} unchanged; a ClusterIP is bound to no interface, so nothing answers it (this is why ping to a ClusterIP fails while curl to its port works).`;
    if (servicePort && (unchanged || (!translated && answer.unmatched)))
      answer.next = kdebug(['drift', '--node', valid.name(node)]);
    return answer;
  }
  const owner = view.nodes.find((n) => n.ips.includes(dst));
  if (owner) answer.destinationIs = `an address of node ${owner.name}`;
  return answer;
}

/** The answer of a walk some of whose outcomes no rule read changed, per share: those the rules
 * read took, then the rest, of which the rules past the read's stop decide. */
function cutAnswer(result: TraceResult, what: string, node: string, stop: ReadStop): string {
  const taken = result.outcomes.filter((o) => o.destination !== null);
  const rest = result.outcomes.filter((o) => o.destination === null);
  const cut = `the rules were not wholly read (${stopText(stop)})`;
  if (taken.length === 0)
    return `No rule read changed ${what}, but ${cut}: what the rules past there do with the packet was not read, so kdebug says nothing of whether kube-proxy wrote this Service on node ${node}.`;
  const took = taken.map(
    (o) =>
      `${shareText(o)} ${o.dnat ? `${translatedBy(o) === 'DNAT to' ? 'are DNATed' : 'are translated'} to ${o.dnat}` : `end in ${o.verdict}`}`,
  );
  const others = shareText({
    probability: rest.reduce((p, o) => p + o.probability, 0),
    ...(rest.some((o) => o.shareUnknown) ? { shareUnknown: 'one share not known' } : {}),
  });
  return `Of new connections to ${what}, ${took.join(', ')}; for the other ${others} no rule read changed the destination, but ${cut}: what the rules past there do with those was not read.`;
}

/** The Service's rules are there, but the entry chain never leads to them. */
function skippedText(
  skipped: { from: string; to: string },
  result: TraceResult,
  dst: string,
  node: string,
): string {
  const who = result.packet.fromHost ? "the node's own processes" : 'Pods and the network';
  return `On node ${node}, ${skipped.from} does not jump to ${skipped.to}: packets from ${who} never reach the Service's rules, which are there (a packet entering ${skipped.to} is DNATed). ${fateText(result, dst)}`;
}

/** nftables: a filter chain hooked before nat refused the packet, each rule on its way named. */
function refusedText(rules: MatchedRule[], result: TraceResult, node: string): string {
  const who = result.packet.fromHost ? "the node's own processes" : 'Pods and the network';
  const steps = rules.map((r) => `${r.table} ${r.chain} line ${r.line} (${r.rule}): ${r.effect}`);
  return `On node ${node}, packets from ${who} are refused before nat runs, so they never reach the Service's rules: ${steps.join('; then ')}.`;
}

/** nftables: the Service rules were entered, but the map leading to the port's chain lacks it. */
function entryMissingText(
  missing: { map: string; key: string },
  result: TraceResult,
  dst: string,
  node: string,
): string {
  return `On node ${node}, ${missing.map} holds no element for ${missing.key}: this Service port's entry, which kube-proxy adds to send its packets to the port's chain, is missing, so they never reach the Service's rules (drift shows what else the node lacks). ${fateText(result, dst)}`;
}

/** What becomes of a packet no rule translated: the rule that refused it, or nothing answers. */
function fateText(result: TraceResult, dst: string): string {
  const refused = result.outcomes.find((o) => o.verdict === 'REJECT' || o.verdict === 'DROP');
  const by = refused?.rules.at(-1);
  if (!refused || !by) return `The packet goes on to ${dst} unchanged, and nothing answers it.`;
  return `Then ${by.table} ${by.chain} line ${by.line} ${refused.verdict === 'REJECT' ? 'rejects' : 'drops'} it: ${by.rule}.`;
}

/** The last Service chain a packet left unchanged entered (KUBE-SVC, -SVL, -XLB, -EXT, -FW), with
 * the rule that took it there: it fell through that chain. */
function fellThrough(o: TraceOutcome) {
  return o.rules.findLast(
    (m) => m.table === 'nat' && /^KUBE-(SVC|SVL|XLB|EXT|FW)-/.test(m.into ?? ''),
  );
}

/** A Service port's packet that entered its Service chain and left it unchanged: where, and how
 * many new connections do. */
function fallThroughText(result: TraceResult, by: MatchedRule, dst: string, node: string): string {
  const share = result.outcomes
    .filter((o) => o.destination === null && fellThrough(o)?.into === by.into)
    .reduce((s, o) => s + o.probability, 0);
  return `On node ${node}, ${by.chain} line ${by.line} takes the packet into ${by.into}, and it leaves ${by.into} unchanged: ${percent(share)} of new connections fall through it, matching none of its endpoint rules (a jump missing, or an endpoint chain without DNAT: drift names which). They go on to ${dst} unchanged, and nothing answers them.`;
}

/** Where the read stopped, as FILE:LINE and the reader's words. */
export const stopText = (s: ReadStop) =>
  `${s.file}${s.line !== null ? `:${s.line}` : ''}: ${s.why}`;
