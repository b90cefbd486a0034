// nftables drift's advice for a table kube-proxy has not brought up to date says its log tells
// why: the next command is that log, of the node's kube-proxy Pod, as iptables drift gives it;
// where the API holds no kube-proxy Pod there, the command that finds it (r147 item 8).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { nftStems } from '../../src/core/facts/facts.js';
import { isKubeProxyPod, toPod } from '../../src/core/kube/objects.js';
import { shellLine } from '../../src/core/findings/next-command.js';
import type { Facts } from '../../src/core/model.js';
import { FIXTURES } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const DIR = join(FIXTURES, '31', 'nftables');

/** The recording with matrix/cluster-ip's service-ips element deleted from node-a's table. */
async function elementDeleted(): Promise<Facts> {
  const facts = await readSnapshot(DIR);
  const stem = nftStems('IPv4').json;
  const json = JSON.parse(facts.nodes['node-a']![stem]!) as {
    nftables: Record<string, { name?: string; elem?: unknown[] } | undefined>[];
  };
  const map = json.nftables.find((o) => o['map']?.name === 'service-ips')!['map']!;
  map.elem = map.elem!.filter((e) => !JSON.stringify(e).includes('matrix/cluster-ip/tcp/http'));
  facts.nodes['node-a']![stem] = JSON.stringify(json);
  return facts;
}

const nextOf = (facts: Facts) => {
  const f = new Analysis(facts, { code: allModes })
    .node('node-a')
    .drift()
    .findings.find((x) => x.id === 'service-rules-missing');
  assert.ok(f, 'the element deleted is found');
  assert.match(f.advice ?? '', /its log says why/);
  return shellLine(f.next!);
};

describe("nftables drift's next command for a sync not made", () => {
  it("is the log of the node's kube-proxy Pod, as the advice says", async () => {
    const facts = await elementDeleted();
    const pod = facts.objects
      .filter((o) => o.kind === 'Pod')
      .map(toPod)
      .find((p) => p.nodeName === 'node-a' && isKubeProxyPod(p))!;
    assert.equal(nextOf(facts), `kubectl -n kube-system logs ${pod.name}`);
  });

  it('where the API holds no kube-proxy Pod on the node, the command that finds it', async () => {
    const facts = await elementDeleted();
    facts.objects = facts.objects.filter(
      (o) => !(o.kind === 'Pod' && isKubeProxyPod(toPod(o)) && toPod(o).nodeName === 'node-a'),
    );
    assert.match(nextOf(facts), /get pods -l k8s-app=kube-proxy .*--field-selector/);
  });
});
