// Expected vs actual, per node and per Service port, semantic first: what matters is where each
// Service port's traffic goes (entry rules, endpoints and their shares, masquerading, local
// policy, rejects), not how the rules are spelled. A dump written by an older kube-proxy that
// routes correctly shows only `rule-text-differs` (info); an exact dump shows nothing.
import { unseen } from '../../../findings/evidence.js';
import { kubectl, onNode } from '../../../findings/next-command.js';
import type { DriftContext, MasqueradeDiff } from './context.js';
import { externalPath, firewall } from './service-port/external.js';
import { internalPath } from './service-port/service.js';
import { removedEntries } from './service-port/stale-port.js';
import { danglingJumps } from './jumps.js';
import { nodeLevelChecks, orphanChains } from './node.js';
import { removedServiceRules } from './removed.js';
import type { ServicesRead } from '../../kube-proxy/removed-services.js';
import { textDifferences, writtenByOf } from './text.js';
import { alikeLines } from './alike.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { ExpectedServicePort } from '../../kube-proxy/service-port.js';
import type { Ruleset } from '../read/parse.js';
import { configTells, type ClusterView, type Pod } from '../../../kube/objects.js';
import type { ServiceTree, ServiceTrees } from '../../trees.js';
import { buildServiceTrees } from '../trees.js';
import {
  capLine,
  DriftInputError,
  driftFinding,
  isDrift,
  SEVERITY,
  sortFindings,
  type DriftFinding,
  type NodeDrift,
} from '../../drift.js';

/** More lines than this in one evidence list are summarised. */
const EVIDENCE_LINES = 24;

export interface DriftInput {
  node: string;
  source: string;
  expected: ExpectedRules;
  actual: Ruleset;
  view: ClusterView;
  /** The trees of `actual`, when the caller has built them already. */
  trees?: ServiceTrees;
  /** Only what one Service's answer uses: its ports and the node-wide checks, not the chains
   * no Service reaches nor how every rule is spelled (`kdebug svc` drops those). */
  servicePortsOnly?: boolean;
  /** The Services read and the lists read whole; absent: no rules are said a removed Service's. */
  servicesRead?: ServicesRead;
}

export function nodeDrift(input: DriftInput): NodeDrift {
  const { expected: exp, actual } = input;
  const nat = actual.table('nat');
  if (!nat)
    throw new DriftInputError(
      `${input.source}: the dump has no nat table, where kube-proxy's Service rules live`,
      'the dump has no nat table',
    );
  const trees = input.trees ?? buildServiceTrees(actual, { servicePorts: exp.servicePorts });
  const byHash = new Map<string, ServiceTree>();
  for (const t of trees.services) if (t.hash) byHash.set(t.hash, t);
  const at = { node: input.node, source: input.source };
  const findings: DriftFinding[] = [];
  const notes: [DriftFinding, string?][] = [];
  const masq: MasqueradeDiff[] = [];
  const filter = actual.table('filter');
  const uncompared: string[] = []; // checks of the filter table, in a dump that has none
  const unread = exp.endpointsFrom.notRead;
  let unobserved = 0; // Service ports' findings, where the objects their endpoints come from were not read
  const ctx: DriftContext = {
    node: input.node,
    source: input.source,
    exp,
    actual,
    nat,
    filter,
    trees: byHash,
    pods: podsByIP(input.view.pods),
    kubeProxy: kubeProxyPodOn(input.view.pods, input.node),
    masquerade: masq,
    reported: new Set(),
    undropped: new Set(),
    add: ({ id, expected = [], actual = [], ...said }) => {
      // rules expected in a table that was not captured are not missing: they were not seen
      if (!filter && expected.length > 0 && expected.every((l) => l.startsWith('-t filter '))) {
        if (SEVERITY[id] !== 'info') uncompared.push(said.title);
        return;
      }
      // a Service port's rules follow its endpoints: unread, what the node holds is not compared
      if (unread && said.service) {
        if (SEVERITY[id] !== 'info') unobserved++;
        return;
      }
      const alike = alikeLines(ctx, said.service, expected);
      findings.push(
        driftFinding(
          id,
          {
            ...said,
            expected: capped(expected),
            actual: capped(actual),
            ...(alike.length > 0 ? { alike } : {}),
          },
          at,
        ),
      );
    },
    note: ({ id, ...said }, traffic) =>
      notes.push([driftFinding(id, said, at, 'info'), traffic && `${said.service} ${traffic}`]),
  };
  const flagged = new Set<string>();
  for (const sp of exp.servicePorts) {
    const before = findings.length;
    checkServicePort(sp, ctx);
    if (findings.slice(before).some(isDrift)) flagged.add(sp.name);
  }
  reportMasquerade(masq, ctx);
  for (const m of masq) if (m.got !== m.want) flagged.add(m.service);
  nodeLevelChecks(ctx);
  danglingJumps(ctx);
  if (!input.servicePortsOnly) orphanChains(ctx, trees.orphans);
  if (!input.servicePortsOnly && input.servicesRead)
    removedServiceRules(ctx, trees.services, input.servicesRead);
  // a Service's own drift compares no spelling, yet says who wrote the rules
  const text = input.servicePortsOnly ? writtenByOf(ctx) : textDifferences(ctx, flagged);
  const notRead: DriftFinding[] = [];
  if (!filter)
    notRead.push(
      driftFinding(
        'table-not-captured',
        {
          title: 'filter table not captured: only nat was compared',
          message: `The dump of ${input.node} has no filter table (a nat-only dump, such as iptables -t nat -S), so kube-proxy's REJECT and DROP rules and the jumps to them were not compared${uncompared.length > 0 ? `; not checked: ${uncompared.join('; ')}` : ''}.`,
          advice: 'Read every table: iptables-save without -t.',
          next: onNode(input.node, ['iptables-save'], { hostBinaries: true }),
        },
        at,
      ),
    );
  if (unread)
    notRead.push(
      driftFinding(
        'table-not-captured',
        {
          title: `${exp.endpointsFrom.reads} not captured: the Service ports' endpoints were not compared`,
          message: `kube-proxy on ${input.node} takes the Services' endpoints from the ${exp.endpointsFrom.reads}, and ${unread}: what the node's Service rules send where is not observed${unobserved > 0 ? ` (${unobserved} difference${unobserved === 1 ? '' : 's'} from an empty list not said)` : ''}, never compared with "no endpoints".`,
          advice: `Capture with read access to the ${exp.endpointsFrom.reads} (kubectl auth can-i list endpoints).`,
          evidence: [unseen(`${exp.endpointsFrom.reads}: ${unread}`, input.node)],
        },
        at,
      ),
    );
  return {
    mode: 'iptables',
    tables: filter ? ['nat', 'filter'] : ['nat'],
    node: input.node,
    source: input.source,
    // their rules follow their endpoints: not read, no Service port was compared
    servicePorts: unread ? 0 : exp.servicePorts.length,
    ...(text.writtenBy ? { writtenBy: text.writtenBy } : {}),
    // said only where a release was read for the node to check the rules against: null, they agree
    ...(exp.requested ? { releaseDisagrees: text.releaseDisagrees ?? null } : {}),
    findings: sortFindings(findings),
    // a note that a port's packets are dropped here, where a rule lets them on, is not so
    notes: notes.flatMap(([n, key]) => (key && ctx.undropped.has(key) ? [] : [n])),
    ...(notRead.length > 0 ? { notRead } : {}),
    drifted: findings.some(isDrift),
  };
}

/** The semantic checks of one Service port: cluster IP traffic, external traffic, firewall. */
function checkServicePort(sp: ExpectedServicePort, c: DriftContext): void {
  const t = c.trees.get(sp.hash);
  const internalCompared = internalPath(sp, t, c);
  externalPath(sp, t, c, internalCompared);
  firewall(sp, t, c);
  removedEntries(sp, t, c);
}

function capped<T>(lines: T[]): (T | string)[] {
  if (lines.length <= EVIDENCE_LINES) return lines;
  return [...lines.slice(0, EVIDENCE_LINES - 1), capLine(lines.length - EVIDENCE_LINES + 1)];
}

function podsByIP(pods: Pod[]): Map<string, Pod[]> {
  const map = new Map<string, Pod[]>();
  for (const p of pods) {
    if (p.hostNetwork) continue;
    for (const ip of p.podIPs) {
      const list = map.get(ip);
      if (list) list.push(p);
      else map.set(ip, [p]);
    }
  }
  return map;
}

/** The kube-proxy Pod of a node, and what is wrong with it when it is not running and ready. */
function kubeProxyPodOn(pods: Pod[], node: string): DriftContext['kubeProxy'] {
  const p = pods.find(
    (x) =>
      x.nodeName === node &&
      x.namespace === 'kube-system' &&
      (x.labels['k8s-app'] === 'kube-proxy' || x.name.startsWith('kube-proxy-')),
  );
  if (!p) return undefined;
  const c = p.containerStatuses[0];
  const ready = p.conditions.find((x) => x.type === 'Ready')?.status === 'True';
  const state = c?.state.reason ?? (c?.state.kind === 'running' ? undefined : c?.state.kind);
  const problem =
    p.deleting || !ready || (c && c.state.kind !== 'running')
      ? `${p.deleting ? 'being deleted' : (state ?? p.phase)}${c?.restartCount ? `, ${c.restartCount} restarts` : ''}`
      : undefined;
  return { pod: p.name, ...(problem ? { problem } : {}), restarts: c?.restartCount ?? 0 };
}

/** Masquerade rules that differ the same way on every Service port are one finding. */
function reportMasquerade(diffs: MasqueradeDiff[], ctx: DriftContext): void {
  if (diffs.length === 0) return;
  const same = diffs.every((d) => d.want === diffs[0]!.want && d.got === diffs[0]!.got);
  const { unread, masqueradeShown } = ctx.exp.config;
  if (unread && !configTells(ctx.exp.config, 'masquerade')) {
    // the configuration was not read: nothing to compare with but the node's own consistency
    const ways = [
      ...new Set([...(masqueradeShown ? [masqueradeShown] : []), ...diffs.map((d) => d.got)]),
    ];
    const actual = diffs.slice(0, 3).flatMap((x) => x.actual);
    const f = {
      id: 'masquerade-differs' as const,
      title:
        ways.length === 1
          ? 'kube-proxy configuration not read: masquerade condition taken from the rules'
          : `Service ports masquerade cluster IP traffic in ${ways.length} different ways`,
      message: `kdebug read no kube-proxy configuration (${unread.why}), so the masquerade condition is not checked against it. On ${ctx.node} ${ways.length === 1 ? `every Service port masquerades on "${ways[0]}"` : `Service ports masquerade in ${ways.length} different ways (${ways.map((w) => `"${w}"`).join(', ')}): one kube-proxy writes one condition for all, so some of these rules are stale or were written by someone else`}.`,
      // one way: the node's own lines are what kube-proxy there writes, never unexpected
      expected: ways.length === 1 ? actual : [],
      actual,
      ...(unread.embeddedIn
        ? {
            advice: `${unread.embeddedIn} gives kube-proxy its flags from its own configuration on the node (cluster-cidr, kube-proxy-arg in /etc/rancher/k3s/config.yaml or its command line): correct it there.`,
          }
        : {
            advice:
              'Find the configuration kube-proxy mounts among the ConfigMaps of kube-system, and correct it where it does not parse.',
            next: kubectl('kube-system', 'get', 'configmaps', '-o', 'name'),
          }),
    };
    // consistent: information; inconsistent among themselves: observed bad, a warning
    if (ways.length === 1) ctx.note(f);
    else ctx.add(f);
    return;
  }
  if (diffs.length > 1 && same) {
    const d = diffs[0]!;
    ctx.add({
      id: 'masquerade-differs',
      title: `cluster IP traffic is masqueraded on "${d.got}", not "${d.want}"`,
      message: `node ${ctx.node} masquerades cluster IP traffic of all ${diffs.length} Service ports when it matches "${d.got}", but the kube-proxy configuration (${ctx.exp.config.source}) says "${d.want}": kube-proxy on this node runs with other settings than the ConfigMap (command-line flags, or not restarted since the ConfigMap changed).`,
      expected: diffs.slice(0, 3).flatMap((x) => x.expected),
      actual: diffs.slice(0, 3).flatMap((x) => x.actual),
      advice: `Compare kube-proxy's flags and its ConfigMap; restart kube-proxy on ${ctx.node} after changing it.`,
      next: kubectl('kube-system', 'get', 'configmap', 'kube-proxy', '-o', 'yaml'),
    });
    return;
  }
  for (const d of diffs)
    ctx.add({
      id: 'masquerade-differs',
      service: d.service,
      title: `cluster IP traffic masqueraded on "${d.got}", expected "${d.want}"`,
      message: `node ${ctx.node} masquerades traffic to ${d.service}'s cluster IP when it matches "${d.got}", but kube-proxy's configuration says "${d.want}".`,
      expected: d.expected,
      actual: d.actual,
    });
}
