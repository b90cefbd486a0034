// The steps after Rules speak of a node's rules only where the Rules step compared them: a dump
// cut short (F6) and an IPVS node whose kube-ipvs0 was not read (I5) are not observed in each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../../src/cluster/snapshot/read.js';
import { evidenceText } from '../../../src/core/findings/evidence.js';
import { hairpinCheck } from '../../../src/core/checks/hairpin.js';
import { rulesCheck } from '../../../src/core/checks/rules/rules.js';
import { diagnose } from '../../../src/core/diagnose.js';
import { trafficPolicyCheck } from '../../../src/core/checks/traffic-policy/traffic-policy.js';
import type { Facts, Finding } from '../../../src/core/model.js';
import { ids, run } from './builders.js';
import { allModes } from '../../support/modes.js';

const NGINX = { namespace: 'default', service: 'nginx-svc' };
const NODE = 'vm-12-7-centos';
const texts = (fs: Finding[]) => fs.flatMap((f) => f.evidence.map(evidenceText));

/** A bundled snapshot with one output of NODE edited (undefined: not recorded). */
async function edited(dir: string, stem: string, edit: (t: string) => string | undefined) {
  const f = await readSnapshot(`snapshots/${dir}`);
  const { [stem]: text, ...rest } = f.nodes[NODE]!;
  const now = edit(text!);
  const outputs = now === undefined ? rest : { ...rest, [stem]: now };
  return { ...f, nodes: { ...f.nodes, [NODE]: outputs } } as Facts;
}

describe('a dump cut short after the Service rules', () => {
  // `head -c 6000`: line 97 cut mid-rule, nginx-svc's chains whole above it
  const cut = () => edited('nginx-svc', 'iptables-save', (t) => t.slice(0, 6000));

  it('is called the dump, not the paste, where the Rules step says it was not compared', async () => {
    const found = run(rulesCheck, await cut(), {}, NGINX).find((f) => f.node === NODE)!;
    assert.equal(found.id, 'rules-not-checked');
    assert.match(found.explanation, /iptables-save\.txt:97: the dump is cut at line 97/);
    assert.doesNotMatch(found.explanation, /paste/);
  });

  it('is cited by neither Traffic policy nor Hairpin: both say it was not compared', async () => {
    const f = await cut();
    const policy = run(trafficPolicyCheck, f, {}, NGINX);
    assert.ok(texts(policy).includes(`not observed: ${NODE}: rules for the Service not compared`));
    const hairpin = run(hairpinCheck, f, {}, NGINX);
    assert.deepEqual(ids(hairpin), [
      'hairpin-masquerade-present:pass',
      'hairpin-not-observed:skip',
    ]);
    assert.ok(!texts(hairpin).some((t) => t.includes(`nodes/${NODE}/`)), texts(hairpin).join('\n'));
    assert.ok(texts(hairpin).some((t) => t.includes(`on ${NODE}: its rules were not compared`)));
  });
});

describe('an IPVS node whose kube-ipvs0 addresses were not read', () => {
  const noAddr = () => edited('ipvs-stale-real-server', 'ip-addr', () => undefined);

  it('is no match in Rules: kube-ipvs0 said not read, not observed', async () => {
    const found = run(rulesCheck, await noAddr(), {}, NGINX).filter((f) => f.node === NODE);
    assert.deepEqual(ids(found), ['rules-ipvs-not-observed:skip']);
    assert.match(
      found[0]!.title,
      /kube-ipvs0's addresses not read \(ip -br addr\): whether it forwards/,
    );
    assert.ok(texts(found).some((t) => t.includes("kube-ipvs0's addresses not read")));
  });

  it('is not observed in Traffic policy, never passed', async () => {
    const policy = run(trafficPolicyCheck, await noAddr(), {}, NGINX);
    const passed = policy.filter((f) => f.status === 'pass');
    assert.ok(!passed.some((f) => f.node === NODE || f.nodes?.includes(NODE)));
    assert.ok(texts(policy).includes(`not observed: ${NODE}: rules for the Service not compared`));
  });
});

describe('IPVS nodes none of whose kube-ipvs0 addresses were read, one real server stale', () => {
  const STALE = 'vm-12-11-centos';
  const noAddr = async () => {
    const f = await readSnapshot('snapshots/ipvs-stale-real-server');
    const nodes = Object.fromEntries(
      Object.entries(f.nodes).map(([n, { 'ip-addr': _, ...rest }]) => [n, rest]),
    );
    return diagnose({ ...f, nodes } as Facts, NGINX, { code: allModes });
  };
  const step = (r: Awaited<ReturnType<typeof noAddr>>, id: string) =>
    r.steps.find((s) => s.id === id)!.findings;

  it('leaves Traffic policy not observed on the stale node, as the Rules step does', async () => {
    const policy = step(await noAddr(), 'traffic-policy');
    assert.deepEqual(ids(policy), ['traffic-policy-not-observed:skip']);
    assert.ok(texts(policy).includes(`not observed: ${STALE}: rules for the Service not compared`));
  });

  it("keeps Hairpin's KUBE-LOOP-BACK entry missing: the ipset was read", async () => {
    const hairpin = step(await noAddr(), 'hairpin');
    assert.ok(ids(hairpin).includes('hairpin-masquerade-missing:warn'), ids(hairpin).join());
    assert.ok(
      texts(hairpin).some((t) => t.includes(`nodes/${STALE}/ipset-save.txt: KUBE-LOOP-BACK lacks`)),
    );
  });
});
