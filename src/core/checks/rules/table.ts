// Step 7 on a node whose Services are kept outside iptables: kube-proxy's nftables mode (its
// nftables table) and IPVS mode (its virtual servers, ipsets and kube-ipvs0), and Cilium's agent
// where it replaces kube-proxy (its frontends and backends). The Service's trees
// are read back from that state, and their endpoints compared with the ones kube-proxy should
// send to (the same endpoint choice as iptables mode: ready, else serving and terminating; local
// ones for the local policies), and every other part kube-proxy should write, as `kdebug drift`
// compares it.
import { withSyncShown } from '../kube-proxy/kube-proxy.js';
import type { Service } from '../../kube/objects.js';
import { seen, stateSeen, unseen } from '../../findings/evidence.js';
import type { Evidence, Finding } from '../../model.js';
import type { NextCommand } from '../../findings/next-command.js';
import { judgedOnNode } from '../../dataplane/drift.js';
import { clusterTrafficEndpoints } from '../../dataplane/trees.js';
import type { IPFamily } from '../../ipv6.js';
import { percent } from '../../model.js';
import { count, familyLabel, findingOf, saveNodeOutput } from '../check.js';
import { kubectl, valid } from '../../findings/next-command.js';
import { couldNotRead } from '../../dataplane/dataplane.js';
import { modeTraits, type StateTraits } from '../../dataplane/mode-traits.js';
import { listingArgv } from '../../nodes/commands.js';
import type { CheckContext } from '../context.js';
import type { OnNode } from './nodes.js';
import {
  ciliumFamiliesServed,
  ciliumIgnoredRanges,
  ciliumPodAbsent,
  ciliumReadInPart,
  ciliumRedirected,
  ciliumRefused,
} from './cilium.js';
import { notStarted } from '../../dataplane/cilium/agent/refused.js';
import { byAddress } from './read-for-service.js';
import { matchedOn } from './compared.js';
import { disagreement } from './node-drift.js';

const finding = findingOf('rules');

/** `kubectl exec` into the node's Cilium agent for its load-balancer table, saved where a
 * snapshot keeps it. */
function agentTable(ctx: CheckContext, node: string) {
  const pod = ctx.analysis.state(node).cilium?.pod;
  return kubectl(
    pod?.namespace ?? 'kube-system',
    'exec',
    pod ? valid.name(pod.name) : 'ds/cilium',
    '--',
    ...listingArgv({ kind: 'cilium', list: 'frontends' }),
  );
}

/** The Rules step's findings for one node whose mode keeps its state outside iptables, in one
 * family, their titles not naming the node (nodes.ts does); a dual-stack Service's say
 * their family. */
export function tableNode(
  ctx: CheckContext,
  node: string,
  svc: Service,
  family: IPFamily = 'IPv4',
): OnNode[] {
  // the node's own findings name it when alone; its drift findings only where others were read
  const on = (findings: Finding[], named = true): OnNode[] =>
    findings.map((finding) => ({ node, family, label: familyLabel(svc, family), named, finding }));
  const n = ctx.analysis.node(node, undefined, family);
  const m = modeTraits(n.mode())?.state;
  if (!m) return [];
  const read = n.stateRead();
  const stem = m.stem(family);
  const save = () => {
    const argv = m.command(family);
    return argv.length > 0 ? saveNodeOutput(node, argv, stem) : agentTable(ctx, node);
  };
  // an agent that does not start holds no table: said so, rather than that none was read; one
  // whose listing was read anyway ran, and the refusal is said beside what that listing gives
  const refused = ciliumRefused(ctx, n, read !== undefined && !read.failure);
  const beside = refused ? [refused] : [];
  const agent = ctx.analysis.state(node).cilium;
  // no agent Pod in the API and no listing of it recorded: not "not in the facts" (where recorded,
  // they are compared, and ciliumPodAbsent says so beside)
  const missing = ctx.analysis.state(node).agentMissing;
  if (!read && missing)
    return on([
      finding(m.notObserved, 'skip', `${m.word} mode, ${m.what(family)} not read`, {
        explanation: `${m.who(node)}, but the API holds no Cilium agent Pod there (the kube-proxy step says so) and no listing of its agent was recorded there, so ${svc.namespace}/${svc.name} is not checked there.`,
        evidence: [
          unseen(
            `${node}: ${m.what(family)} not read (no Cilium agent Pod on ${node} in the API)`,
            node,
          ),
        ],
        next: save(),
        node,
      }),
    ]);
  if (!read)
    return on(
      refused && agent && notStarted(agent)
        ? [refused]
        : [
            finding(m.notObserved, 'skip', `${m.word} mode, ${m.what(family)} not read`, {
              explanation: `${m.who(node)} and kdebug did not read ${m.what(family)} (nodes/${node}/${stem}.txt is not in the facts), so ${svc.namespace}/${svc.name} is not checked there.`,
              evidence: [unseen(`nodes/${node}/${stem}.txt: not in the facts`, node)],
              next: save(),
              node,
            }),
            ...beside,
          ],
    );
  const trees = !read.failure ? n.trees(ctx.scope) : undefined;
  if (!trees)
    return on([
      unreadable(
        `the ${m.word} state cannot be read`,
        node,
        read.failure ? couldNotRead(read.failure) : `${read.source}: not read`,
        save(),
      ),
      ...beside,
    ]);
  // a listing cut short would show everything after the cut as missing: said, not compared
  if (read.cut)
    return on([
      unreadable(
        `the ${m.word} listing is cut short`,
        node,
        `${read.source} ends at line ${read.cut.line} inside ${read.cut.inside}: what came after was not recorded, so ${svc.namespace}/${svc.name} is not compared there (what is missing could be missing from the listing only)`,
        save(),
      ),
      ...beside,
    ]);
  // the drift of this Service's ports, as `kdebug drift` computes it in this mode
  const drift = n.driftOnNode(ctx.scope);
  // lines of the listing not read that this Service's comparison may rest on: not observed
  const dataplane = n.dataplane();
  const names = new Set(svc.ports.map((p) => ctx.servicePortName(p)));
  const blind = (dataplane?.notReadFor(names) ?? []).map((u) => unseen(u, node));
  const out = drift.findings.map((d) => withSyncShown(ctx, node, judgedOnNode(d, read.source)));
  const parts: string[] = [];
  const evidence: Evidence[] = [];
  for (const port of svc.ports) {
    const tree = trees.services.find((t) => t.name === ctx.servicePortName(port));
    if (!tree) continue;
    const label = `${port.port}/${port.protocol}`;
    // a frontend's backends are its own (Cilium); kube-proxy's local-only trees have no KUBE-SVC
    const eps = m.ownBackends ? tree.endpoints : clusterTrafficEndpoints(tree);
    const at = { node, source: read.source };
    evidence.push(
      ...(dataplane?.entryLines(tree) ?? []).map((l) => stateSeen(node, l)),
      ...eps.map((e) =>
        seen(
          `  ${e.shareUnknown ? '?' : percent(e.probability)} -> ${e.address ?? '?'} (${e.chain})`,
          at,
        ),
      ),
    );
    const reject = tree.verdicts.some((v) => v.kind === 'reject');
    parts.push(
      eps.length > 0
        ? `${label} -> ${count(eps.length, 'endpoint')}`
        : reject
          ? `${label} -> REJECT (no endpoints)`
          : `${label} -> no endpoints`,
    );
  }
  // what the agent makes of the Service that no comparison shows: ranges it ignores
  const ignored = [...ciliumIgnoredRanges(ctx, n, svc), ...ciliumPodAbsent(ctx, n)];
  // a frontend a Local Redirect Policy takes: its endpoints are not where this node sends it
  const redirects = ciliumRedirected(node, drift.notes ?? [], names);
  // the release read is newer than the table's signs allow: said as in iptables mode (node-drift.ts)
  const disagrees = drift.releaseDisagrees
    ? [disagreement(ctx, n, svc, read.source, drift.releaseDisagrees)]
    : [];
  const drifted = on(out, false).concat(on([...beside, ...disagrees, ...redirects, ...ignored]));
  const uncompared = dataplane?.notCompared(drift);
  // a part without which whether the node forwards the Service is not known: no match said
  const forwarding = dataplane?.forwardingNotRead?.(drift);
  // a part of the state not compared is not observed, whatever the rest shows: the step passes
  // only in part, and drift found elsewhere says nothing of it
  const partly = uncompared
    ? [
        finding(
          m.notObserved,
          'skip',
          forwarding
            ? `${forwarding}: whether it forwards the Service is not observed`
            : `part of the ${m.word} state not compared`,
          {
            explanation: `On ${node}, ${uncompared}: what that part holds for ${svc.namespace}/${svc.name} is not observed.`,
            evidence: [unseen(`${node}: ${uncompared}`, node)],
            node,
          },
        ),
      ]
    : [];
  // Cilium's table read in part: what it lacks of the Service is not observed, so no match is
  // said, as a dump cut short is not compared
  const unread =
    blind.length === 0
      ? []
      : [
          m.partReadNoMatch
            ? ciliumReadInPart(node, svc, read.source, blind)
            : nftNotRead(m, read.source, node, svc, blind),
        ];
  if (
    out.some((f) => f.status === 'fail' || f.status === 'warn') ||
    redirects.length > 0 ||
    parts.length === 0 ||
    forwarding ||
    (m.partReadNoMatch && unread.length > 0)
  )
    return drifted.concat(on([...unread, ...partly]));
  const keeper = m.perFamily ? `kube-proxy's ${m.word} state` : `${m.word}'s agent`;
  const match = finding('rules-match', 'pass', `${parts.join(', ')} in ${m.word}, as expected`, {
    explanation: `${keeper} on ${node} sends ${svc.namespace}/${svc.name} to exactly the ${m.sendsTo} it should for the current objects${uncompared ? ` (${uncompared})` : ''}.${byAddress(ctx, node, family)}`,
    // a line not read keeps this from passing: said, as not observed
    evidence: [...evidence, ...blind],
    node,
  });
  const families: IPFamily[] = m.perFamily ? [family] : ciliumFamiliesServed(ctx, n, svc);
  return drifted.concat(
    { ...on([match])[0]!, matched: matchedOn(svc, [node], families, match) },
    on(partly),
  );
}

/** A node's rules that did not read (`why` names the file): nothing of them is observed, so the
 * Service is not checked there; the listing saved again is the next command. */
export const unreadable = (
  title: string,
  node: string,
  why: string,
  next: NextCommand | undefined,
) =>
  finding('rules-unreadable', 'skip', title, {
    explanation: why,
    evidence: [unseen(why, node)],
    ...(next ? { next } : {}),
    node,
  });

/** Lines of the node's listing not read that may hold what it does for the Service: a skip that
 * names each, where no pass carries them. */
const nftNotRead = (
  m: StateTraits,
  source: string,
  node: string,
  svc: Service,
  blind: Evidence[],
) =>
  linesNotRead(m.notObserved, `the ${m.word} listing`, 'nft does not print there', {
    source,
    node,
    svc,
    blind,
  });

/** Lines of a node's rules (`what`: "the nftables listing", "the rules dump") not read, that may
 * hold what it does for the Service: a skip that names each, and says nothing of what they hold. */
export function linesNotRead(
  id: StateTraits['notObserved'] | 'rules-not-observed',
  what: string,
  why: string,
  p: { source: string; node: string; svc: Service; blind: Evidence[]; before?: string },
): Finding {
  const one = p.blind.length === 1;
  return finding(id, 'skip', `${count(p.blind.length, 'line')} of ${what} not read`, {
    explanation: `${p.before ?? ''}${p.source} holds ${one ? 'a line' : 'lines'} ${why}, which may hold what ${p.node} does for ${p.svc.namespace}/${p.svc.name}: kdebug did not read ${one ? 'it' : 'them'}, so nothing ${one ? 'it holds' : 'they hold'} is said to be there or missing.`,
    evidence: p.blind,
    node: p.node,
  });
}
