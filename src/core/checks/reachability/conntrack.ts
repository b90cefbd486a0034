// Part of step 8: the connections the kernel still tracks to the Service's cluster IPs. A UDP
// entry (a DNS client's, say) whose answers come from an address that is no longer an endpoint
// keeps sending that client to a Pod that is gone, until the entry times out; kube-proxy clears
// such entries when an endpoint goes, and when it has not, they are shown here with the command
// that clears them. kdebug deletes nothing. conntrack's insert_failed counter is the SNAT race.
import {
  parseConntrack,
  parseConntrackStats,
  type ConntrackEntry,
  type ConntrackStats,
} from '../../facts/conntrack.js';
import type { Service } from '../../kube/objects.js';
import { seen, unseen } from '../../findings/evidence.js';
import type { Evidence, Finding } from '../../model.js';
import { commandStem } from '../../nodes/commands.js';
import { onNode, valid } from '../../findings/next-command.js';
import { count, findingOf, list } from '../check.js';
import type { CheckContext } from '../context.js';

const finding = findingOf('reachability');

/** Entries shown per finding; the rest are counted. */
const SHOWN = 8;

export function conntrackFindings(ctx: CheckContext, svc: Service): Finding[] {
  if (svc.headless || svc.type === 'ExternalName') return [];
  const out: Finding[] = [];
  const clean: Evidence[] = [];
  const blind: Evidence[] = [];
  const blindNodes: string[] = [];
  const blindWhy: string[] = [];
  const unread: Evidence[] = [];
  let entries = 0;
  for (const node of ctx.nodeNames())
    for (const dst of svc.clusterIPs)
      for (const protocol of ['udp', 'tcp'] as const) {
        const ports = svc.ports.filter((p) => p.protocol.toLowerCase() === protocol);
        if (ports.length === 0) continue;
        const stem = commandStem({ kind: 'conntrack-list', protocol, dst });
        const text = ctx.output(node, stem);
        if (text === undefined) {
          // it ran and failed (a command not run on this transport is said in the access line)
          const error = ctx.analysis.nodeErrors.find(
            node,
            (e) => e.command === stem && e.exitCode !== null,
          );
          if (error) {
            blindWhy.push(error.error);
            blind.push(
              unseen(`${node}: conntrack -L -p ${protocol} -d ${dst}: ${error.error}`, node),
            );
            blindNodes.push(node);
          }
          continue;
        }
        // what the clients sent to one of the Service's ports, DNATed (answered from elsewhere)
        const listed = parseConntrack(text);
        // a line conntrack would not print (an address that is no IP): said, never an endpoint
        if (listed.unread.length > 0)
          unread.push(
            unseen(
              `${node}: ${count(listed.unread.length, 'line')} of conntrack -L -p ${protocol} -d ${dst} not as conntrack prints them (an address that is no IP address): not read (nodes/${node}/${stem}.txt)`,
              node,
            ),
          );
        const own = listed.entries.filter(
          (e) =>
            e.orig.dst === dst && ports.some((p) => p.port === e.orig.dport) && e.reply.src !== dst,
        );
        entries += own.length;
        const current = new Set(
          ports.flatMap((p) =>
            ctx
              .endpoints(p)
              .filter((x) => x.ready || x.serving)
              .map((x) => x.ip),
          ),
        );
        const stale = new Map<string, ConntrackEntry[]>(); // old endpoint -> its entries
        for (const e of own.filter((x) => !current.has(x.reply.src)))
          stale.set(e.reply.src, [...(stale.get(e.reply.src) ?? []), e]);
        for (const [old, list] of stale)
          out.push(staleFinding(ctx, node, dst, protocol, old, list, stem));
        if (stale.size === 0)
          clean.push(
            seen(
              `${node}: ${count(own.length, `${protocol.toUpperCase()} entry`, `${protocol.toUpperCase()} entries`)} to ${dst}, each to a current endpoint (nodes/${node}/${stem}.txt)`,
              { node, source: `nodes/${node}/${stem}.txt` },
            ),
          );
      }
  if (clean.length > 0 && out.length === 0)
    out.push(
      finding(
        'conntrack-entries-current',
        'pass',
        entries > 0
          ? `conntrack: ${count(entries, 'tracked connection')} to the Service, each to a current endpoint`
          : 'conntrack: no tracked connection to the Service on the nodes read',
        {
          explanation:
            'The kernel tracks each connection to a ClusterIP with the endpoint it was DNATed to; none of those read goes to an address that is no longer an endpoint.',
          evidence: clean,
        },
      ),
    );
  if (unread.length > 0)
    out.push(
      finding('conntrack-not-observed', 'skip', 'conntrack entries in part not read', {
        explanation:
          'Some lines of the recorded conntrack listing are not as conntrack prints them, so the connections they stand for are not known: nothing is said of them (no endpoint is read from them).',
        evidence: unread,
      }),
    );
  if (blind.length > 0)
    out.push(
      finding('conntrack-not-observed', 'skip', 'conntrack entries not observed', {
        explanation: `kdebug could not list the connections the kernel tracks to the Service (${blindWhy[0]}), so it cannot say whether some still go to an old endpoint. The node needs the conntrack tool (conntrack-tools) and the rights iptables-save needs.`,
        evidence: blind,
        next: onNode(blindNodes[0]!, ['conntrack', '-L', '-d', valid.ip(svc.clusterIP)]),
      }),
    );
  out.push(...insertFailed(ctx));
  return out;
}

function staleFinding(
  ctx: CheckContext,
  node: string,
  dst: string,
  protocol: 'udp' | 'tcp',
  old: string,
  entries: ConntrackEntry[],
  stem: string,
): Finding {
  const svc = ctx.service!;
  const udp = protocol === 'udp';
  const ports = [...new Set(entries.map((e) => e.orig.dport))].join(', ');
  return finding(
    'conntrack-stale-entries',
    udp ? 'fail' : 'warn',
    `${node}: ${count(entries.length, `${protocol.toUpperCase()} conntrack entry`, `${protocol.toUpperCase()} conntrack entries`)} to ${dst}:${ports} still go to ${old}, no longer an endpoint`,
    {
      explanation: udp
        ? `The kernel keeps a UDP "connection" while packets keep coming, and sends each of them to the endpoint it first picked: these clients on ${node} still send ${svc.namespace}/${svc.name}'s traffic to ${old}, which is no longer an endpoint (the DNS-lookups-time-out-after-CoreDNS-moved case). kube-proxy clears such entries when an endpoint goes; these were not. Clearing them sends the next packet through the Service's rules again.`
        : `These TCP connections on ${node} were DNATed to ${old}, which is no longer an endpoint: they fail or hang, while new connections reach the current endpoints.`,
      evidence: [
        ...entries.slice(0, SHOWN).map((e) =>
          seen(`nodes/${node}/${stem}.txt: ${e.text}`, {
            node,
            source: `nodes/${node}/${stem}.txt`,
          }),
        ),
        ...(entries.length > SHOWN
          ? [seen(`... and ${entries.length - SHOWN} more`, { node })]
          : []),
      ],
      advice: 'kdebug deletes nothing: this command clears them.',
      next: onNode(node, [
        'conntrack',
        '-D',
        '-p',
        protocol,
        '--orig-dst',
        valid.ip(dst),
        '--reply-src',
        valid.ip(old),
      ]),
      node,
    },
  );
}

/** conntrack -S: insert_failed counts the packets dropped because two connections raced for one
 * tuple (the SNAT race of parallel UDP lookups). Read before and after the node's probes, it is
 * seen to grow or not; read once (an older snapshot), it says since boot. */
function insertFailed(ctx: CheckContext): Finding[] {
  const reads = ctx.nodeNames().flatMap((node) => {
    const first = parseConntrackStats(ctx.output(node, 'conntrack-stats') ?? '');
    const again = parseConntrackStats(ctx.output(node, 'conntrack-stats-again') ?? '');
    return first ? [{ node, first, again }] : [];
  });
  const line = (node: string, stem: string, s: ConntrackStats) =>
    seen(
      `nodes/${node}/${stem}.txt: insert_failed=${s.insertFailed} drop=${s.drop} over ${count(s.cpus, 'CPU')}`,
      { node, source: `nodes/${node}/${stem}.txt` },
    );
  const grew = reads.filter((r) => r.again && r.again.insertFailed > r.first.insertFailed);
  if (grew.length > 0)
    return [
      finding(
        'conntrack-insert-failed',
        'warn',
        `conntrack insert_failed grew on ${list(grew.map((r) => `${r.node} (+${r.again!.insertFailed - r.first.insertFailed})`))} while kdebug probed`,
        {
          explanation: `${RACE} kdebug read the counters before and after its probes on each node (its DNS lookups among them), and they grew: the race happens now, on these nodes.`,
          evidence: grew.flatMap((r) => [
            line(r.node, 'conntrack-stats', r.first),
            line(r.node, 'conntrack-stats-again', r.again!),
          ]),
          advice: `Watch it on ${grew[0]!.node}: a lookup that loses the race takes 5 s.`,
          next: onNode(grew[0]!.node, ['conntrack', '-S']),
        },
      ),
    ];
  const since = reads.filter((r) => r.first.insertFailed > 0);
  if (since.length === 0) return [];
  const steady = since.filter((r) => r.again);
  return [
    finding(
      'conntrack-insert-failed',
      steady.length === since.length ? 'pass' : 'warn',
      `conntrack insert_failed on ${list(since.map((r) => `${r.node} (${r.first.insertFailed})`))}${steady.length === since.length ? ', not growing while kdebug probed' : ''}`,
      {
        explanation: `${RACE} The counter is since boot. ${steady.length === since.length ? 'kdebug read it before and after its probes and it did not grow: an old race, not one happening now.' : 'kdebug read it once: read it twice, a minute apart, to see it grow.'}`,
        evidence: since.flatMap((r) => [
          line(r.node, 'conntrack-stats', r.first),
          ...(r.again ? [line(r.node, 'conntrack-stats-again', r.again)] : []),
        ]),
        ...(steady.length === since.length
          ? { info: true }
          : {
              advice: `Read it twice on ${since[0]!.node}, a minute apart.`,
              next: onNode(since[0]!.node, ['conntrack', '-S']),
            }),
      },
    ),
  ];
}

const RACE =
  "The kernel failed to insert a connection's entry because another one raced it for the same tuple (the conntrack SNAT/DNAT race): that packet is dropped. With parallel UDP lookups (glibc's A and AAAA) it shows as DNS lookups that take 5 s.";
