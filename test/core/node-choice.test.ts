// Which nodes one Service's live diagnosis reads: every node of a small cluster; on a large one
// the client's, the endpoints', the unhealthy ones (from the API alone) and a sample, capped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterView } from '../../src/core/kube/objects.js';
import type { KubeObject } from '../../src/core/model.js';
import { chooseNodes, reasonText, recordedChoice } from '../../src/core/nodes/choice.js';
import { aNode, aPod, anEndpointSlice, aService } from '../cluster/objects.js';

const target = { namespace: 'default', service: 'web' };

/** A cluster of n nodes, each with a Ready kube-proxy Pod on one image; web's endpoints on 2. */
function cluster(n: number, change: (objects: KubeObject[]) => void = () => undefined) {
  const objects: KubeObject[] = [
    aService('web'),
    anEndpointSlice('web', 'default', [
      { ip: '10.244.7.5', pod: 'web-1', node: 'node-7' },
      { ip: '10.244.9.6', pod: 'web-2', node: 'node-9' },
    ]),
  ];
  for (let i = 0; i < n; i++) {
    objects.push(aNode(`node-${i}`, `192.0.2.${i % 250}`, `10.244.${i % 250}.0/24`));
    objects.push(kubeProxy(`kube-proxy-${i}`, `node-${i}`, 'registry.k8s.io/kube-proxy:v1.33.2'));
  }
  change(objects);
  return clusterView(objects);
}

function kubeProxy(name: string, node: string, image: string): KubeObject {
  const p = aPod(name, 'kube-system', { labels: { 'k8s-app': 'kube-proxy' }, node });
  const spec = p['spec'] as { containers: { image: string }[] };
  spec.containers[0]!.image = image;
  return p;
}

const names = (c: ReturnType<typeof chooseNodes>) => c.chosen.map((x) => x.node);
/** A fixed "random" draw: always the first of what is left. */
const first = () => 0;

describe('chooseNodes', () => {
  it('a small cluster: every node, as before', () => {
    const c = chooseNodes(cluster(12), target);
    assert.equal(c.policy, 'every');
    assert.equal(c.total, 12);
    assert.equal(c.chosen.length, 12);
  });

  it("a large one: the endpoints' nodes, then a sample of the others, no more than the cap", () => {
    const c = chooseNodes(cluster(300), target, { random: first });
    assert.equal(c.policy, 'chosen');
    assert.equal(c.total, 300);
    assert.deepEqual(names(c), ['node-7', 'node-9', 'node-0', 'node-1', 'node-2']);
    assert.deepEqual(
      c.chosen.map((x) => x.why),
      [['endpoints'], ['endpoints'], ['sample'], ['sample'], ['sample']],
    );
  });

  it('the client first; a node that is both says both', () => {
    const c = chooseNodes(cluster(300), target, { client: 'node-9', random: first, sample: 0 });
    assert.deepEqual(
      c.chosen.map((x) => [x.node, x.why]),
      [
        ['node-9', ['client', 'endpoints']],
        ['node-7', ['endpoints']],
      ],
    );
    assert.equal(reasonText(c.chosen[0]!), 'the client, holds endpoints');
  });

  it('a client kdebug did not find is said, never guessed', () => {
    const c = chooseNodes(cluster(300), target, { clientAsked: 'pod/gone', sample: 0 });
    assert.equal(c.clientNotFound, 'pod/gone');
    assert.deepEqual(names(c), ['node-7', 'node-9']);
  });

  it('nodes whose kube-proxy looks unhealthy from the API: missing, not Ready, restarted, another image; Node not Ready', () => {
    const view = cluster(300, (objects) => {
      const pod = (node: string) =>
        objects.find(
          (o) => o.kind === 'Pod' && (o['spec'] as { nodeName?: string }).nodeName === node,
        )!;
      objects.splice(objects.indexOf(pod('node-20')), 1);
      (pod('node-21')['status'] as { conditions: { status: string }[] }).conditions[0]!.status =
        'False';
      (pod('node-22')['status'] as Record<string, unknown>)['containerStatuses'] = [
        { name: 'app', ready: true, restartCount: 4, state: { running: {} } },
      ];
      (pod('node-23')['spec'] as { containers: { image: string }[] }).containers[0]!.image =
        'registry.k8s.io/kube-proxy:v1.29.0';
      const node = objects.find((o) => o.kind === 'Node' && o.metadata?.name === 'node-24')!;
      (node['status'] as { conditions: { status: string }[] }).conditions[0]!.status = 'False';
    });
    const c = chooseNodes(view, target, { sample: 0 });
    assert.deepEqual(
      c.chosen.map((x) => [x.node, x.why.join(), x.detail]),
      [
        ['node-7', 'endpoints', undefined],
        ['node-9', 'endpoints', undefined],
        ['node-24', 'unhealthy', 'Node not Ready'],
        ['node-20', 'unhealthy', 'no kube-proxy Pod'],
        ['node-21', 'unhealthy', 'kube-proxy Pod kube-proxy-21 not Running and Ready'],
        ['node-22', 'unhealthy', 'kube-proxy Pod kube-proxy-22 restarted'],
        [
          'node-23',
          'unhealthy',
          'kube-proxy Pod kube-proxy-23 runs registry.k8s.io/kube-proxy:v1.29.0, most run registry.k8s.io/kube-proxy:v1.33.2',
        ],
      ],
    );
  });

  it('the cap holds whatever the reasons: the first reasons fill it, the sample gets what is left', () => {
    const c = chooseNodes(cluster(300), target, { max: 1, random: first });
    assert.deepEqual(names(c), ['node-7']);
    assert.equal(c.max, 1);
  });

  it('--nodes reads those; --all-nodes every Linux node; --max-nodes moves the line', () => {
    assert.deepEqual(names(chooseNodes(cluster(300), target, { nodes: ['node-3'] })), ['node-3']);
    assert.equal(chooseNodes(cluster(300), target, { all: true }).chosen.length, 300);
    assert.equal(chooseNodes(cluster(300), target, { max: 300 }).policy, 'every');
  });

  it('Windows nodes are not counted: nothing is read there', () => {
    const view = cluster(21, (objects) => {
      const node = objects.find((o) => o.kind === 'Node' && o.metadata?.name === 'node-0')!;
      node.metadata!.labels = { 'kubernetes.io/os': 'windows' };
    });
    const c = chooseNodes(view, target);
    assert.equal(c.total, 20);
    assert.equal(c.policy, 'every');
    assert.ok(!names(c).includes('node-0'));
  });

  it('a recorded choice is read back only when it is one (a snapshot may hold anything)', () => {
    const c = chooseNodes(cluster(300), target, { random: first });
    assert.deepEqual(recordedChoice(JSON.parse(JSON.stringify({ nodeChoice: c }))), c);
    for (const bad of [
      { nodeChoice: 'x' },
      { nodeChoice: { ...c, policy: 'most' } },
      { nodeChoice: { ...c, total: '300' } },
      { nodeChoice: { ...c, chosen: [{ node: 'a', why: ['because'] }] } },
      { nodeChoice: { ...c, chosen: [{ node: 7, why: [] }] } },
    ])
      assert.equal(recordedChoice(bad), undefined, JSON.stringify(bad));
  });
});
