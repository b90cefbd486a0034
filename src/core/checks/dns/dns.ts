// Step 5: cluster DNS. Is CoreDNS up behind the kube-dns Service; which names the Service answers
// to and with what; what a recorded lookup against the kube-dns ClusterIP actually returned; and
// the search path and ndots, which decide whether a short name works from another namespace.
import { computed, unseen } from '../../findings/evidence.js';
import type { Service } from '../../kube/objects.js';
import type { Finding } from '../../model.js';
import { kubectl, valid, w, NODE_DEBUG_IMAGE } from '../../findings/next-command.js';
import { type Check, findingOf, pending } from '../check.js';
import { coreDns } from './coredns.js';
import { lookups } from './lookups.js';
import {
  clusterDomain,
  expectedRecords,
  kubeDnsService,
  zoneMismatch,
  type Expected,
} from './records.js';

const finding = findingOf('dns');

function names(svc: Service, expected: Expected[], domain: string): Finding {
  const fqdn = `${svc.name}.${svc.namespace}.svc.${domain}`;
  const shown = expected.map(
    (e) =>
      `${e.name} ${e.type} -> ${e.answers.length > 0 ? e.answers.join(', ') : 'NXDOMAIN (no ready endpoints)'}`,
  );
  return finding('dns-names', 'pass', `${svc.name}, ${svc.name}.${svc.namespace} and ${fqdn}`, {
    explanation: `From a Pod in namespace ${svc.namespace}, "${svc.name}" resolves through the first search domain (${svc.namespace}.svc.${domain}). From any other namespace the short name fails: use "${svc.name}.${svc.namespace}" (found through the "svc.${domain}" search domain) or the full name. With the default "options ndots:5", a name with fewer than 5 dots is tried with each search domain first, so "${svc.name}.${svc.namespace}" costs a few NXDOMAIN round trips before it resolves; "${fqdn}." with the final dot goes straight to the answer. Pods with hostNetwork need dnsPolicy ClusterFirstWithHostNet to use cluster DNS at all.`,
    evidence: [
      ...shown,
      `search path in a Pod of ${svc.namespace}: ${svc.namespace}.svc.${domain} svc.${domain} ${domain}`,
    ].map((l) => computed(l)),
    // the names follow from the Service's name: an explanation, not something observed
    info: true,
    folded: true,
  });
}

export const dnsCheck: Check<'dns'> = {
  id: 'dns',
  title: 'DNS',
  needs: ['service'],
  run(ctx) {
    const svc = ctx.service!;
    const dns = kubeDnsService(ctx);
    if (!dns && ctx.waiting('objects')) return pending('reading the kube-dns Service');
    const recordedSystem =
      ctx.view.pods.some((p) => p.namespace === 'kube-system') ||
      ctx.view.configMaps.some((c) => c.namespace === 'kube-system');
    const domain = clusterDomain(ctx);
    const expected = expectedRecords(ctx, svc, domain);
    const named = names(svc, expected, domain);
    if (!dns && !recordedSystem)
      return [
        named,
        finding(
          'coredns-not-recorded',
          'skip',
          'cluster DNS was not recorded (no kube-system objects)',
          {
            explanation:
              'The facts hold no kube-dns Service or CoreDNS Pods, so kdebug cannot tell whether DNS works.',
            evidence: [unseen('no kube-system objects were recorded')],
            next: kubectl('kube-system', 'get', 'service', 'kube-dns'),
          },
        ),
      ];
    const core = coreDns(ctx, dns);
    const found = lookups(
      ctx,
      expected,
      dns?.clusterIP,
      core.status === 'fail' ? { finding: core, step: 'DNS' } : undefined,
    );
    if (found.length === 0 && ctx.waiting('nodes'))
      return pending('waiting for the DNS lookups on the nodes');
    // read from both configurations: says what no lookup was there to show
    const answered = found.some((f) => f.id === 'dns-answer-ok' || f.id === 'dns-answer-wrong');
    const zone = answered ? undefined : zoneMismatch(ctx);
    if (zone)
      found.push(
        finding(
          'dns-zone-mismatch',
          'warn',
          `CoreDNS serves ${zone.served.join(', ')}, Pods search ${zone.kubelet}: ${svc.name}.${svc.namespace}.svc.${zone.kubelet} would be NXDOMAIN`,
          {
            explanation: `The Corefile's kubernetes plugin serves ${zone.served.join(', ')}, while kubelet gives Pods the cluster domain ${zone.kubelet} (their resolv.conf search path): every Service name under ${zone.kubelet} gets NXDOMAIN from CoreDNS. No lookup was recorded to show it; both configurations were read from the API. Make the Corefile's kubernetes zone ${zone.kubelet}, or kubelet's clusterDomain the zone CoreDNS serves.`,
            evidence: zone.evidence,
            next: kubectl('kube-system', 'get', 'configmap', 'coredns', '-o', 'yaml'),
          },
        ),
      );
    if (found.length === 0 && ctx.nodeNames().length > 0 && dns)
      found.push(
        finding('dns-lookup-not-recorded', 'skip', 'no recorded lookup of the Service name', {
          explanation: `No node ran a lookup against kube-dns ${dns.clusterIP}, so the answer CoreDNS gives was not checked.`,
          evidence: [
            unseen(`no lookup of ${svc.name}'s names against ${dns.clusterIP} was recorded`),
          ],
          // a Pod's view of DNS: the lookup as the Service's clients make it
          next: kubectl(
            svc.namespace,
            'run',
            'kdebug-dig',
            '-it',
            '--rm',
            '--restart=Never',
            `--image=${NODE_DEBUG_IMAGE}`,
            '--',
            'dig',
            w`@${valid.ip(dns.clusterIP)}`,
            valid.dnsName(expected[0]!.name),
          ),
        }),
      );
    // a lookup that answered as expected is the best summary of the step
    return found.some((f) => f.status === 'pass')
      ? [...found, core, named]
      : [core, named, ...found];
  },
};
