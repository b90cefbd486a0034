// The schemas against the TypeScript types of the documents: each object's property names in
// schema/ are exactly the keys of the type the code builds it from. Checked by the type checker
// (npm run typecheck): a key added to or dropped from a document's type, and not from its schema,
// does not compile. The runtime half is outputs.test.ts (real documents, additionalProperties).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { reportDoc } from '../../src/output/json.js';
import type { driftDoc } from '../../src/output/drift.js';
import type { rulesDoc, searchDoc } from '../../src/output/rules.js';
import type { traceDoc } from '../../src/output/trace.js';
import type { VersionDoc } from '../../src/commands/version.js';
import type { expectDoc } from '../../src/output/expect.js';
import type Expect from '../../schema/expect.v1.json';
import type Report from '../../schema/report.v2.json';
import type Rules from '../../schema/rules.v2.json';
import type Search from '../../schema/rules-search.v1.json';
import type Drift from '../../schema/drift.v1.json';
import type Trace from '../../schema/trace.v2.json';
import type Version from '../../schema/version.v1.json';

/** Every key of every member of a union (optional spreads make unions). */
type Keys<T> = T extends unknown ? keyof T : never;
type Item<T> = NonNullable<T> extends readonly (infer U)[] ? U : never;
type Props<S> = S extends { properties: infer P } ? keyof P : never;
/** true when the type's keys and the schema's properties are the same names. */
type Same<T, S> = [Keys<NonNullable<T>>] extends [Props<S>]
  ? [Props<S>] extends [Keys<NonNullable<T>>]
    ? true
    : { schemaLacksNothing: Exclude<Props<S>, Keys<NonNullable<T>>> }
  : { schemaLacks: Exclude<Keys<NonNullable<T>>, Props<S>> };
const same = <T extends true>(): T | undefined => undefined;

type R = ReturnType<typeof reportDoc>;
type Ru = ReturnType<typeof rulesDoc>;
type Tree = Item<Ru['services']>;
type D = ReturnType<typeof driftDoc>;
type T = ReturnType<typeof traceDoc>;
type Sh = ReturnType<typeof searchDoc>;

// one line per object of each document
const checked = [
  same<Same<R, typeof Report>>(),
  same<Same<R['target'], typeof Report.properties.target>>(),
  same<Same<Item<R['notRead']>, typeof Report.properties.notRead.items>>(),
  same<Same<R['service'], (typeof Report.properties.service.anyOf)[0]>>(),
  same<Same<Item<R['steps']>, typeof Report.properties.steps.items>>(),
  same<Same<Item<Item<R['steps']>['findings']>, typeof Report.$defs.finding>>(),
  same<Same<Item<Item<Item<R['steps']>['findings']>['evidence']>, typeof Report.$defs.evidence>>(),
  same<Same<Ru, typeof Rules>>(),
  same<Same<Ru['counts'], typeof Rules.properties.counts>>(),
  same<Same<Item<Ru['warnings']>, typeof Rules.$defs.warning>>(),
  same<Same<Item<Ru['orphans']>, typeof Rules.properties.orphans.items>>(),
  same<Same<Tree, typeof Rules.$defs.tree>>(),
  same<Same<Tree['chains'], typeof Rules.$defs.tree.properties.chains>>(),
  same<Same<Item<Tree['entries']>, typeof Rules.$defs.entry>>(),
  same<Same<Item<Tree['endpoints']>, typeof Rules.$defs.endpoint>>(),
  same<Same<Item<Tree['masquerade']>, typeof Rules.$defs.tree.properties.masquerade.items>>(),
  same<Same<Item<Tree['verdicts']>, typeof Rules.$defs.tree.properties.verdicts.items>>(),
  same<Same<Sh, typeof Search>>(),
  same<Same<Item<Sh['hits']>, typeof Search.properties.hits.items>>(),
  same<Same<D, typeof Drift>>(),
  same<Same<Item<D['nodes']>, typeof Drift.properties.nodes.items>>(),
  same<Same<Item<D['nodes']>['counts'], typeof Drift.properties.nodes.items.properties.counts>>(),
  same<
    Same<
      Item<D['nodes']>['releaseDisagrees'],
      typeof Drift.properties.nodes.items.properties.releaseDisagrees
    >
  >(),
  same<Same<Item<D['nodes']>['cilium'], typeof Drift.properties.nodes.items.properties.cilium>>(),
  same<
    Same<
      Item<NonNullable<Item<D['nodes']>['cilium']>['settings']>,
      typeof Drift.$defs.ciliumSetting
    >
  >(),
  same<
    Same<
      Item<NonNullable<Item<D['nodes']>['cilium']>['settings']>['source'],
      typeof Drift.$defs.ciliumSettingSource
    >
  >(),
  same<Same<Item<D['findings']>, typeof Drift.$defs.finding>>(),
  same<Same<D['summary'], typeof Drift.properties.summary>>(),
  same<Same<T, typeof Trace>>(),
  same<Same<T['packet'], typeof Trace.properties.packet>>(),
  same<Same<Item<T['outcomes']>, typeof Trace.properties.outcomes.items>>(),
  same<
    Same<
      Item<Item<T['outcomes']>['rules']>,
      typeof Trace.properties.outcomes.items.properties.rules.items
    >
  >(),
  same<Same<VersionDoc, typeof Version>>(),
  same<Same<ReturnType<typeof expectDoc>, typeof Expect>>(),
  same<Same<Item<ReturnType<typeof expectDoc>['settings']>, typeof Expect.$defs.ciliumSetting>>(),
];

describe('the schemas and the types', () => {
  it('are compared by the type checker, one object at a time', () => {
    assert.equal(checked.length, 35);
  });
});
