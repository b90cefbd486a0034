// parseList: a list's JSON parsed item by item is JSON.parse's answer, its items mapped, and
// JSON.parse's error where the text is no JSON; each item is mapped before the next is parsed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseList } from '../../../src/cluster/kube/list-json.js';
import { servedKubeProxyPod } from '../kube-proxy-pod.js';

const same = (item: unknown) => item;

/** JSON.parse's error for the text, or undefined. */
function parseError(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

const pods = [0, 1, 2].map((i) => servedKubeProxyPod(i, `node-${i}`, `198.51.100.${i}`));

/** Texts whose strings hold what a bracket matcher could trip on, laid out in several ways. */
const LISTS: string[] = [
  JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: pods }),
  JSON.stringify({ kind: 'PodList', items: pods }, null, 2),
  '{"kind":"PodList","items":[]}',
  '{ "items" : [ ] , "kind" : "List" }',
  '{"kind":"List","items":null}',
  '{"items":[{"a":"}]{[\\"","b":["]",{"c":"\\\\"}]},\n\t{"d":"\\\\\\"}"}\r\n],"kind":"List"}',
  '{"kind":"items","metadata":{"items":[{"x":1}]},"items":[{"y":"items"}]}',
  '{"kind":"List","items":[{"e":"\\u007b\\u0022"},{"f":"é ☃ \\ud83d\\ude00"}],"z":[1,{"g":2}]}',
  // not a list of objects: JSON.parse's answer all the same
  '{"kind":"List","items":[1,null,"x",[2]]}',
  '{"kind":"List","items":{"a":1}}',
  '[{"items":[{"a":1}]}]',
  '{"items":[{"a":1}],"items":[{"b":2}]}',
  '{"kind":"Status","code":410}',
  '"items"',
];

describe('parseList', () => {
  it("answers JSON.parse's answer, whatever the layout and the strings hold", () => {
    for (const text of LISTS) assert.deepEqual(parseList(text, same), JSON.parse(text), text);
  });

  it('maps each item, handed the rest of the page', () => {
    const text = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', items: pods });
    const seen: unknown[] = [];
    const page = parseList(text, (item, p) => {
      seen.push((p as { kind: string; items: unknown[] }).kind);
      return (item as { metadata: { name: string } }).metadata.name;
    }) as { items: string[] };
    assert.deepEqual(page.items, ['kube-proxy-00000', 'kube-proxy-00001', 'kube-proxy-00002']);
    assert.deepEqual(seen, ['PodList', 'PodList', 'PodList']);
  });

  it('maps each item before the next is parsed: no page is held whole', () => {
    // strings that hold quotes, backslashes and brackets do not throw the matching off
    const items = [...pods, { a: '}]{["\\', b: ['\\"]'] }, { c: '\\' }];
    const text = JSON.stringify({ kind: 'PodList', items });
    const parse = JSON.parse;
    const order: string[] = [];
    JSON.parse = ((t: string) => {
      order.push(`parse ${t.length}`);
      return parse(t) as unknown;
    }) as typeof JSON.parse;
    try {
      parseList(text, (item) => {
        order.push('map');
        return item;
      });
    } finally {
      JSON.parse = parse;
    }
    const sizes = items.map((p) => `parse ${JSON.stringify(p).length}`);
    assert.deepEqual(order, [
      `parse ${'{"kind":"PodList","items":[]}'.length}`,
      ...sizes.flatMap((s) => [s, 'map']),
    ]);
  });

  it("throws JSON.parse's error for what is no JSON", () => {
    const texts = [
      ...LISTS.flatMap((t) => [t.slice(0, -1), t.slice(0, Math.floor(t.length / 2)), `${t}x`]),
      '{"items":[{"a":1} {"b":2}]}',
      '{"items":[{"a":1},,{"b":2}]}',
      '{"items":[{"a":1},]}',
      '{"items":[{"a":1}\u00a0]}',
      '{"items":[{"a":"\\x"}]}',
      '{"items":[{"a":1}]}}',
      '',
    ];
    for (const text of texts) {
      const error = parseError(text);
      if (error === undefined) continue;
      assert.throws(() => parseList(text, same), { name: 'SyntaxError', message: error }, text);
    }
  });
});
