import assert from 'node:assert/strict';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import { describe, it } from 'node:test';
import { miss, selectorCheck } from '../../../src/core/checks/selector.js';
import { aPod, aService, anEndpointSlice, facts, ids, run, webPods } from './builders.js';

/** A next command as the person's terminal shows it. */
const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

const withSelector = (selector: Record<string, string> | undefined) =>
  aService({ spec: { selector } });

describe('selector step', () => {
  it('counts the Pods it matches and names their workload', () => {
    const [f] = run(selectorCheck, facts([aService(), ...webPods()]));
    assert.equal(f!.id, 'selector-matches-pods');
    assert.equal(f!.title, 'selector app=web matches 2 Pods');
    assert.match(f!.explanation, /Deployment web/);
  });

  const misses: {
    name: string;
    selector: Record<string, string>;
    labels: Record<string, string>;
    differs: RegExp;
    patch?: string;
  }[] = [
    {
      name: 'a typo in the value',
      selector: { app: 'wbe' },
      labels: { app: 'web' },
      differs: /app=web where the selector wants app=wbe/,
      patch: '{"spec":{"selector":{"app":"web"}}}',
    },
    {
      name: 'run= instead of app=',
      selector: { app: 'web' },
      labels: { run: 'web' },
      differs: /run=web where the selector wants app=web/,
      patch: '{"spec":{"selector":{"run":"web","app":null}}}',
    },
    {
      name: 'a typo in the key',
      selector: { ap: 'web' },
      labels: { app: 'web' },
      differs: /app=web where the selector wants ap=web/,
      patch: '{"spec":{"selector":{"app":"web","ap":null}}}',
    },
    {
      name: 'one of two labels wrong',
      selector: { app: 'web', tier: 'front' },
      labels: { app: 'web', tier: 'frontend' },
      differs: /tier=frontend where the selector wants tier=front/,
    },
  ];
  for (const m of misses)
    it(`no match, nearest miss: ${m.name}`, () => {
      const [f] = run(
        selectorCheck,
        facts([
          withSelector(m.selector),
          aPod({ labels: m.labels }),
          aPod({ name: 'db-0', labels: { app: 'postgres' } }),
        ]),
      );
      assert.equal(`${f!.id}:${f!.status}`, 'selector-matches-no-pods:fail');
      assert.match(f!.explanation, m.differs);
      assert.doesNotMatch(f!.explanation, /postgres/);
      if (m.patch)
        assert.equal(
          line(f!.next),
          `kubectl -n default patch service web --type=merge -p '${m.patch}'`,
        );
      else assert.equal(line(f!.next), 'kubectl -n default get pods --show-labels');
    });

  it('says so when no Pod is even close', () => {
    const [f] = run(
      selectorCheck,
      facts([withSelector({ app: 'web' }), aPod({ labels: { app: 'postgres' } })]),
    );
    assert.match(f!.explanation, /None of the 1 Pod read in the namespace has labels close to it/);
  });

  it('warns when the selector spans several workloads', () => {
    const other = aPod({
      name: 'api-1',
      labels: { app: 'web', 'pod-template-hash': '55aa' },
      owner: { kind: 'ReplicaSet', name: 'api-55aa' },
    });
    assert.deepEqual(ids(run(selectorCheck, facts([aService(), ...webPods(), other]))), [
      'selector-matches-pods:pass',
      'selector-matches-several-workloads:warn',
    ]);
  });

  it('recognises a Service without a selector', () => {
    assert.deepEqual(ids(run(selectorCheck, facts([withSelector(undefined), anEndpointSlice()]))), [
      'selector-none:pass',
    ]);
  });
});

describe('a selector against a Pod with many labels', () => {
  it('finds a label of the wanted value, or a typo of the key, as before', () => {
    assert.deepEqual(miss({ app: 'web' }, { a: 'x', role: 'web' })?.differences, [
      'has role=web where the selector wants app=web',
    ]);
    assert.deepEqual(miss({ app: 'web' }, { apq: 'wxb', role: 'web' })?.differences, [
      'has apq=wxb where the selector wants app=web',
    ]);
  });

  it('compares 20,000 selector keys with 20,000 labels in linear time', () => {
    const selector: Record<string, string> = {};
    const labels: Record<string, string> = {};
    for (let n = 0; n < 20_000; n++) {
      selector[`key-${n}`] = `value-${n}`;
      labels[`other-${n}`] = `other-${n}`;
    }
    labels['key-0'] = 'value-0';
    const start = Date.now();
    const m = miss(selector, labels);
    // was over 120 s; a loaded machine takes well under a second
    assert.ok(Date.now() - start < 5000, `${Date.now() - start} ms`);
    assert.equal(m?.differences.length, 19_999);
  });
});
