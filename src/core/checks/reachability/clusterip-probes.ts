// The connections to the ClusterIP:port, one family at a time: answered, dropped by design
// (internalTrafficPolicy Local), or failed, with the earlier fault or the node's rules as the cause.
import type { Service, ServicePort } from '../../kube/objects.js';
import { percent, type Finding } from '../../model.js';
import { kdebug, onNode, valid } from '../../findings/next-command.js';
import { commandStem } from '../../nodes/commands.js';
import { consequence, findingOf, list, type Cause } from '../check.js';
import type { CheckContext } from '../context.js';
import {
  connectProbe,
  probingNodes,
  addressOf,
  observed,
  probed,
  probedEvidence,
  refused,
  type Probed,
} from './probes.js';
import { connectionFate, packetWalk, podEntrySkipped, rejectedBy } from './packet-evidence.js';
import { familyOf, hostPort } from '../../ipv6.js';
import { isOn, ofFamily, readOn, rulesAsExpected, trafficLost } from '../symptom.js';
import { notObserved, notProbed } from './not-observed.js';
import { ENDPOINT_CAUSES } from './endpoint-probes.js';

const finding = findingOf('reachability');

const CLUSTERIP_CAUSES = [
  ...ENDPOINT_CAUSES,
  'kube-proxy-not-running',
  'service-rules-missing',
  'service-chain-missing',
  'endpoint-missing',
  'endpoint-stale',
  'no-endpoints-reject-missing',
  'local-policy-wrong',
  'local-policy-drop',
];

export function clusterIpProbes(
  ctx: CheckContext,
  svc: Service,
  port: ServicePort,
  earlier: Finding[],
  ip: string,
  direct: Probed[] = [],
): Finding[] {
  // a dual-stack Service's findings say which family they are about
  const family = svc.clusterIPs.length > 1 ? (ip.includes(':') ? 'IPv6: ' : 'IPv4: ') : '';
  const probe = connectProbe(ip, port.port, port.protocol);
  if (!probe) return [];
  const ran = probed(ctx, probe);
  // nodes that probed, but not this address (a family left out, a probe lost): said, never
  // passed over
  const by = new Set(ran.map((p) => p.node));
  const missing = probingNodes(ctx).filter((n) => !by.has(n));
  const unprobed = notProbed(
    ctx,
    `${family}ClusterIP ${addressOf(ctx, port, ip)}`,
    missing.length > 0 ? [{ target: addressOf(ctx, port, ip), nodes: missing }] : [],
    port,
  );
  if (ran.length === 0) return unprobed;
  const got = ran.filter(observed);
  const blind = [
    ...notObserved(
      ctx,
      `${family}ClusterIP ${addressOf(ctx, port, ip)}`,
      ran.filter((p) => !observed(p)),
      port,
    ),
    ...unprobed,
  ];
  if (got.length === 0) return blind;
  const spn = ctx.servicePortName(port);
  // internalTrafficPolicy Local: a node without a local endpoint drops it by design (step 9)
  const local = svc.internalTrafficPolicy === 'Local';
  const hasLocal = (node: string) =>
    ctx.endpoints(port).some((e) => e.nodeName === node && (e.ready || e.serving));
  const dropped = got.filter((p) => p.result.status === 'fail' && local && !hasLocal(p.node));
  const byDesign: Finding[] =
    dropped.length === 0
      ? []
      : [
          finding(
            'clusterip-unreachable',
            'warn',
            `${family}ClusterIP ${addressOf(ctx, port, ip)} dropped on ${list(dropped.map((p) => p.node))}, as internalTrafficPolicy Local does there`,
            {
              explanation: `With internalTrafficPolicy: Local kube-proxy sends ClusterIP traffic only to endpoints on the sender's own node, and ${list(dropped.map((p) => p.node))} ${dropped.length === 1 ? 'runs' : 'run'} none: it drops the connection, as designed. This is the traffic policy at work (step 9), not a broken Service.`,
              evidence: dropped.map(probedEvidence),
              service: spn,
            },
          ),
        ];
  const failed = got.filter((p) => p.result.status === 'fail' && !dropped.includes(p));
  const answered = got.filter((p) => !dropped.includes(p));
  if (failed.length === 0 && answered.length === 0) return [...byDesign, ...blind];
  const toPort = { dst: ip, port: port.port, proto: port.protocol.toLowerCase() };
  if (failed.length === 0) {
    // the probe is the node's own connection: where Pods' entry skips the Service rules, its
    // answer speaks for the node alone, and Pods' connections there are not translated
    const hostOnly = answered.flatMap((p) => {
      const s = podEntrySkipped(ctx, p.node, toPort);
      return s ? [{ probe: p, ...s }] : [];
    });
    // where the rules of the node's family (not passed by the Rules step, which failed there) do
    // not take a share of connections to an endpoint, its one answer is the share that works
    const partly = answered.flatMap((p) => {
      if (hostOnly.some((h) => h.probe === p)) return [];
      const lost = trafficLost(ctx, p.node, toPort);
      return lost ? [{ probe: p, ...lost }] : [];
    });
    const forAll = answered.filter(
      (p) => !hostOnly.some((h) => h.probe === p) && !partly.some((h) => h.probe === p),
    );
    return [
      ...byDesign,
      ...(forAll.length > 0
        ? [
            finding(
              'clusterip-reachable',
              'pass',
              `${family}ClusterIP ${addressOf(ctx, port, ip)} answers from ${list(forAll.map((p) => p.node))}`,
              {
                explanation: `A ${port.protocol} connection to the ClusterIP is translated to an endpoint and answered.`,
                evidence: forAll.map(probedEvidence),
                service: spn,
              },
            ),
          ]
        : []),
      ...hostOnly.map((h) =>
        podsNotTranslated(ctx, h, `${family}ClusterIP ${addressOf(ctx, port, ip)}`, toPort, spn),
      ),
      ...partly.map((h) =>
        someLost(ctx, h, `${family}ClusterIP ${addressOf(ctx, port, ip)}`, toPort, spn),
      ),
      ...blind,
    ];
  }
  const inStep = earlier.find((f) => f.id === 'endpoint-unreachable');
  const cause =
    // a node's fault explains only that node's failures: another node's missing rules do not
    // cause a refusal where the rules were read to DNAT it
    ctx.earlier.find((c) => {
      if (!CLUSTERIP_CAUSES.includes(c.finding.id) || !ofFamily(c, familyOf(ip))) return false;
      const on = [c.finding.node, ...(c.finding.nodes ?? [])].filter((n) => n !== undefined);
      return on.length === 0 || on.some((n) => failed.some((p) => p.node === n));
    }) ?? (inStep ? { finding: inStep, step: 'Reachability' } : undefined);
  const r = failed.find(refused);
  // who refused it, as the refusing node's rules show: never guessed from the API's endpoints
  const fate = r && connectionFate(ctx, r.node, toPort);
  // a timeout where the report's own evidence rules out both usual causes on the failing nodes:
  // the Rules step read their rules as expected, every endpoint answers directly from them
  const asExpected = rulesAsExpected(ctx, ip);
  const answersDirect = (node: string) => {
    const mine = direct.filter((p) => p.node === node);
    return mine.length > 0 && mine.every((p) => p.result.status === 'pass');
  };
  const ruledOut =
    !r && failed.every((p) => asExpected.has(p.node) && answersDirect(p.node))
      ? failed.map((p) => p.node)
      : undefined;
  const proto = port.protocol.toLowerCase() === 'udp' ? 'udp' : 'tcp';
  const tracked = ruledOut?.filter(
    (n) =>
      ctx.output(n, commandStem({ kind: 'conntrack-list', protocol: proto, dst: ip })) !==
      undefined,
  );
  const explanation = r
    ? fate === 'forwarded'
      ? `The connection to ${hostPort(ip, port.port)} was refused. The rules on ${r.node} DNAT it to the Service's endpoints, and the Pod refused it: nothing listens on the targetPort there.`
      : fate === 'rejected'
        ? `The connection to ${hostPort(ip, port.port)} was refused at once, ${rejectedBy(ctx, r.node, toPort)}.`
        : `The connection to ${hostPort(ip, port.port)} was refused: either kube-proxy forwarded it to an endpoint where nothing listens on the targetPort, or rejected it itself, as it does for a Service without ready endpoints. ${fate ? `The rules on ${r.node} do not say which (kdebug trace walks them).` : `The rules on ${r.node} were not read to say which.`}`
    : ruledOut
      ? `The connection to ${hostPort(ip, port.port)} got no answer from ${list(ruledOut)}, yet neither usual cause fits there: the Rules step read the rules of ${list(ruledOut)} for it as expected (they send it to the endpoints), and every endpoint answers directly from ${list(ruledOut)}. What remains is between the two: ${tracked && tracked.length === ruledOut.length ? '' : `conntrack state on ${list(ruledOut)} that sends the connection elsewhere (an entry from before the rules changed), `}the packet leaving by another path (a route, policy routing, or a filter rule after the DNAT), a NetworkPolicy that treats the Service's connection unlike the direct one, or the probe itself (one lost attempt): run it again there.`
      : `The connection to ${hostPort(ip, port.port)} got no answer from ${list(failed.map((p) => p.node))}. Either the node has no rule for it (so the packet leaves unchanged towards the default route, where nobody owns the ClusterIP), or it was forwarded to an endpoint that does not answer.`;
  return [
    consequence(
      finding(
        'clusterip-unreachable',
        'fail',
        `${family}ClusterIP ${addressOf(ctx, port, ip)}: ${failed[0]!.result.detail}`,
        {
          explanation: `${explanation}${failed.length < answered.length ? ` It works from ${list(answered.filter((p) => !failed.includes(p)).map((p) => p.node))}${ruledOut ? '' : `: compare that node's rules with the failing one's (Rules step)`}.` : ''}`,
          evidence: [
            ...answered.map(probedEvidence),
            ...(fate === 'forwarded' || fate === 'rejected'
              ? packetWalk(ctx, r!.node, toPort)
              : []),
            // what rules the usual causes out, where it did: the direct answers, the walk
            ...(ruledOut
              ? [
                  ...direct.filter((p) => ruledOut.includes(p.node)).map(probedEvidence),
                  ...packetWalk(ctx, ruledOut[0]!, toPort),
                ]
              : []),
          ],
          // the trace would only show the DNAT the Rules step passed: the node's conntrack
          // entries (else the probe again) say what became of the connection
          next: ruledOut
            ? tracked && tracked.length === ruledOut.length
              ? onNode(ruledOut[0]!, [
                  'nc',
                  ...(proto === 'udp' ? ['-u'] : []),
                  '-vz',
                  '-w',
                  '3',
                  valid.ip(ip),
                  valid.port(port.port),
                ])
              : onNode(ruledOut[0]!, ['conntrack', '-L', '-p', proto, '-d', valid.ip(ip)])
            : kdebug([
                'trace',
                '--node',
                valid.name(failed[0]!.node),
                '--dst',
                valid.ip(ip) && hostPort(ip, port.port),
                '--proto',
                valid.protocol(port.protocol),
                '--from-host', // from the node's own address, of the cluster IP's family
              ]),
          node: failed.length === 1 ? failed[0]!.node : undefined,
          service: spn,
        },
      ),
      cause,
    ),
    ...byDesign,
    ...blind,
  ];
}

/** A ClusterIP the node's own probe reaches, whose Pods' connections never reach the Service
 * rules (the entry chain lacks its jump): not a pass for them, a symptom of the Rules finding. */
function podsNotTranslated(
  ctx: CheckContext,
  h: { probe: Probed } & NonNullable<ReturnType<typeof podEntrySkipped>>,
  what: string,
  toPort: { dst: string; port: number; proto: string },
  spn: string,
): Finding {
  const node = h.probe.node;
  const { from, to } = h.skipped;
  const cause = ctx.earlier.find(
    (c) =>
      c.finding.id === 'entry-jump-missing' && isOn(c, node) && ofFamily(c, familyOf(toPort.dst)),
  );
  // the rule lines the Rules step read on the node, where the jump should be
  const rules = readOn(cause, node);
  return consequence(
    finding(
      'clusterip-unreachable',
      'fail',
      `${what}: Pods' connections on ${node} are not translated (${from} does not jump to ${to}); the node's own probe answers`,
      {
        explanation: `The probe from ${node} is the node's own connection: it enters through ${h.host}, reaches the Service's rules and was answered. Connections from Pods and from outside clients enter ${node} through ${h.pods}, ${h.pods === from ? 'which' : `where ${from}`} does not jump to ${to}: they never reach the Service's rules there and are not translated to an endpoint (the walk says what becomes of them instead).`,
        evidence: [probedEvidence(h.probe), ...rules, ...packetWalk(ctx, node, toPort, true)],
        // the cause's command (restart kube-proxy there), else the node's drift that names it
        next: cause?.finding.next ?? kdebug(['drift', '--node', valid.name(node)]),
        node,
        service: spn,
      },
    ),
    cause,
  );
}

/** A ClusterIP the node's probe reached where the node's rules do not take a share of connections
 * to an endpoint: one answer is the share that works, not a pass; a symptom of the Rules finding. */
function someLost(
  ctx: CheckContext,
  h: { probe: Probed; lost: { share: number; unknown: boolean }; cause: Cause },
  what: string,
  toPort: { dst: string; port: number; proto: string },
  spn: string,
): Finding {
  const node = h.probe.node;
  const share = h.lost.unknown ? 'a share' : percent(h.lost.share);
  return consequence(
    finding(
      'clusterip-unreachable',
      'fail',
      `${what}: the probe from ${node} answered, but its rules do not take ${share} of connections to an endpoint`,
      {
        explanation: `The probe from ${node} is one connection, and it reached an endpoint. The Rules step read rules on ${node} that do not take ${share} of new connections to the ClusterIP to an endpoint (the walk says where they go, as far as the rules show): that one answer does not show the Service works from ${node}, only that some of its connections do.`,
        evidence: [
          probedEvidence(h.probe),
          ...readOn(h.cause, node),
          ...packetWalk(ctx, node, toPort),
        ],
        next: h.cause.finding.next ?? kdebug(['drift', '--node', valid.name(node)]),
        node,
        service: spn,
      },
    ),
    h.cause,
  );
}
