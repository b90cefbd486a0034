// Cilium's own load-balancer script tests, as data (test/fixtures/cilium/vectors, copied from
// ../shared/cilium-vectors): each vector's objects, the options its harness and script set, and
// its expected listings. Shared by the tests that compare kdebug's model of Cilium with them.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { load } from 'js-yaml';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { CILIUM_DEFAULTS } from '../../src/core/dataplane/cilium/expected.js';

const DIR = new URL('../fixtures/cilium/vectors/', import.meta.url).pathname;
export const vectors = readdirSync(DIR).filter((d) => /^\d\d-/.test(d));
export const vectorFile = (v: string, f: string) => `${DIR}${v}/${f}`;

/** A vector's expected listing, or undefined where the script checks none. */
export const listing = (v: string, f: string): string | undefined =>
  existsSync(vectorFile(v, f)) ? readFileSync(vectorFile(v, f), 'utf8') : undefined;

/** What the harness and the script set: the objects, flags, the local node's labels. */
export function setup(v: string) {
  const config = readFileSync(vectorFile(v, 'config.txt'), 'utf8');
  const labels: Record<string, string> = {};
  const block = /Local node labels:\n((?: {2}\S.*\n?)+)/.exec(config)?.[1] ?? '';
  for (const m of block.matchAll(/^ {2}([^=\s]+)=(\S+)/gm)) labels[m[1]!] = m[2]!;
  const docs = readFileSync(vectorFile(v, 'objects.yaml'), 'utf8')
    .split(/^---$/m)
    .map((d) => load(d) as KubeObject | null)
    .filter((d): d is KubeObject => !!d);
  return {
    docs,
    view: clusterView(docs),
    node: { name: 'testnode', labels },
    options: {
      ...CILIUM_DEFAULTS,
      serviceTopology: /--enable-service-topology\b/.test(config),
      // every vector is from a branch point before 1.18.1's zone-hint fallback
      zoneHintsFallback: false,
    },
  };
}

// Frontends kdebug does not model yet, by what makes them: HostPort frontends come from Pods,
// the health server's from a synthetic Service of Cilium's own.
export const UNMODELLED = (row: { type?: string; service?: string }) =>
  row.type === 'HostPort' || (row.service ?? '').endsWith(':healthserver');
