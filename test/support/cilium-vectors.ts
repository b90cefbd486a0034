// Cilium's own load-balancer script tests, as data (test/fixtures/cilium/vectors, copied from
// ../shared/cilium-vectors): each vector's objects, the options its harness and script set, and
// its expected listings. Shared by the tests that compare kdebug's model of Cilium with them.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { load } from 'js-yaml';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { CILIUM_DEFAULTS } from '../../src/core/dataplane/cilium/expected/expected.js';
import { CILIUM_MAP_DEFAULTS } from '../../src/core/dataplane/cilium/maps/expected.js';
import { lbSetting } from '../../src/core/dataplane/cilium/agent/lb-config.js';
import { releaseBehaviour } from '../../src/core/dataplane/cilium/agent/release-behaviour.js';
import { parseVersion, type Version } from '../../src/core/version.js';

const DIR = new URL('../fixtures/cilium/vectors/', import.meta.url).pathname;
// numbered from 01 (past 99 with three digits), in that order
export const vectors = readdirSync(DIR)
  .filter((d) => /^\d{2,3}-/.test(d))
  .sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
export const vectorFile = (v: string, f: string) => `${DIR}${v}/${f}`;

/** A vector's expected listing, or undefined where the script checks none. */
export const listing = (v: string, f: string): string | undefined =>
  existsSync(vectorFile(v, f)) ? readFileSync(vectorFile(v, f), 'utf8') : undefined;

// The latest patch of each later line whose scripts the vectors hold (a vector naming its era
// only is taken as that patch).
const LATEST: Record<string, string> = { '1.19': 'v1.19.7', '1.20': 'v1.20.2' };

/** The release whose scripts a vector is from: its config's "Agent version:", else its era
 * (src.txt, or the folder's -v119- tag) from 1.19 on; undefined for the 1.17 and 1.18 ones,
 * all from branch points before any patch release. */
export function vectorRelease(v: string): Version | undefined {
  const config = readFileSync(vectorFile(v, 'config.txt'), 'utf8');
  const said = /^Agent version:\s+(v?\d+\.\d+\.\d+)/m.exec(config)?.[1];
  if (said) return parseVersion(said);
  const src = listing(v, 'src.txt') ?? '';
  const era =
    /^era:\s+v?(\d+\.\d+)/m.exec(src)?.[1] ?? /-v1(\d\d)-/.exec(v)?.[1]?.replace(/^/, '1.');
  if (!era) return undefined;
  // a later line than those named above: its first release
  const later = Number(era.split('.')[1]) >= 19 ? `v${era}.0` : undefined;
  return parseVersion(LATEST[era] ?? later);
}

/** What the harness and the script set: the objects, flags, the local node's labels. */
export function setup(v: string) {
  const config = readFileSync(vectorFile(v, 'config.txt'), 'utf8');
  const release = vectorRelease(v);
  const labels: Record<string, string> = {};
  const block = /Local node labels:\n((?: {2}\S.*\n?)+)/.exec(config)?.[1] ?? '';
  for (const m of block.matchAll(/^ {2}([^=\s]+)=(\S+)/gm)) labels[m[1]!] = m[2]!;
  const docs = readFileSync(vectorFile(v, 'objects.yaml'), 'utf8')
    .split(/^---$/m)
    .map((d) => load(d) as KubeObject | null)
    .filter((d): d is KubeObject => !!d);
  const flag = (re: RegExp) => re.test(config);
  // the script's --key=value, read as the agent reads its config
  const flagValue = (key: string) => new RegExp(`--${key}=(\\w+)`).exec(config)?.[1];
  const nodePortAddresses = [...config.matchAll(/^ {2}addr: (\S+) +nodeport: true/gm)].map(
    (m) => m[1]!,
  );
  const kpr = !flag(/--kube-proxy-replacement=false/);
  return {
    docs,
    view: clusterView(docs),
    node: { name: 'testnode', labels, nodePortAddresses },
    options: {
      ...CILIUM_DEFAULTS,
      kubeProxyReplacement: kpr,
      // the health server package's harness turns this on (its config.txt's harness note)
      healthCheckLoadBalancerIP: flag(/EnableHealthCheckLoadBalancerIP=true/),
      healthCheckNodePort: !flag(/--enable-health-check-nodeport=false/),
      serviceTopology: flag(/--enable-service-topology\b/),
      ...(release
        ? // a later release's own behaviour, with 1.18.1's zone-hint fallback
          { ...releaseBehaviour(release), zoneHintsFallback: true }
        : {
            // the 1.17 and 1.18 vectors are from branch points before 1.18.1's zone-hint
            // fallback
            zoneHintsFallback: false,
            // and before 1.18.6, where the ranges guard LoadBalancer frontends only
            // (cilium#42351)
            sourceRangeTypes: 'all' as const,
            // and before endpoints not serving were backends (cilium#40969, 1.18.5)
            servingEndpointsOnly: true,
          }),
      // the script's own flag (1.19 on)
      ...(flag(/--bpf-lb-source-range-all-types(?:=true)?(?!\S)/)
        ? { sourceRangeTypes: 'all' as const }
        : {}),
    },
    maps: {
      nodePortAddresses,
      // every address of the node-addresses table, NodePort or not
      nodeAddresses: [...config.matchAll(/^ {2}addr: (\S+) /gm)].map((m) => m[1]!),
      options: {
        ...CILIUM_MAP_DEFAULTS,
        kubeProxyReplacement: kpr,
        externalClusterIP: flag(/--bpf-lb-external-clusterip(?:=true)?(?!\S)/),
        algorithm: lbSetting(flagValue, 'bpf-lb-algorithm', release) ?? 'random',
        algorithmAnnotation: flag(/--bpf-lb-algorithm-annotation\b/),
        forwardingAnnotation: flag(/--bpf-lb-mode-annotation\b/),
        forwarding: lbSetting(flagValue, 'bpf-lb-mode', release) ?? 'snat',
        wildcardEntries:
          (release ? releaseBehaviour(release).wildcardEntries : false) &&
          !flag(/--bpf-lb-enable-wildcard-entries=false/),
        nodePortConflicts: release ? releaseBehaviour(release).nodePortConflicts : false,
        datapathCandidates: release ? releaseBehaviour(release).datapathCandidates : false,
        hybridForwarding: release ? releaseBehaviour(release).hybridForwarding : false,
        wildcardSkipsNodeAddress: release
          ? releaseBehaviour(release).wildcardSkipsNodeAddress
          : false,
      },
    },
  };
}
