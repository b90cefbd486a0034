// A walk over a dump cut inside a Service chain (r137 f2: the demo's vm-12-7 iptables-save cut
// after line 92, mid KUBE-SVC-ELCM5PCEQWBTUJ2I, no filter table past it): the outcome that fell
// through the cut chain is "not known", not "routed unchanged, forwarded, masqueraded", and no
// outcome is said forwarded by a filter table the dump does not hold.
// IPs: Service CIDR 10.1.0.0/16, Pod CIDR 10.244.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { readStop } from '../../src/core/dataplane/iptables/trace/trace-cut.js';
import { traceAnswer } from '../../src/core/dataplane/trace/answer.js';
import { traceDoc, traceText } from '../../src/output/trace.js';
import { traceSummary } from '../../src/mcp/summary.js';
import { allModes } from '../support/modes.js';

const NODE = 'vm-12-7-centos';

async function walk(lines?: number) {
  const facts = await readSnapshot('snapshots/nginx-svc');
  const dump = facts.nodes[NODE]!['iptables-save']!;
  if (lines)
    facts.nodes[NODE]!['iptables-save'] = `${dump.split('\n').slice(0, lines).join('\n')}\n`;
  const analysis = new Analysis(facts, { code: allModes });
  const node = analysis.node(NODE);
  const result = node.trace({
    src: '10.244.0.5',
    dst: '10.1.190.219',
    dport: 8080,
    protocol: 'tcp',
    fromHost: false,
  });
  const stop = readStop(node.ruleset(), 'iptables-save.txt', result.outcomes);
  return traceAnswer(result, analysis.view, NODE, stop);
}

describe('trace over a dump cut inside a Service chain', () => {
  it('the outcome that fell through the cut chain is not known; none is "forwarded" as fact', async () => {
    const a = await walk(92);
    const text = traceText(a);
    assert.doesNotMatch(text, /routed unchanged/);
    assert.match(
      text,
      /50% {2}not known: no rule read changed the destination, but it fell through\s+KUBE-SVC-ELCM5PCEQWBTUJ2I, which the dump holds only up to its cut/,
    );
    // the filter table lies past the cut: FORWARD's verdict is not observed
    assert.match(text, /50% {2}DNAT to 10\.244\.0\.3:80, forwarded unless filter drops it \(the/);
    assert.doesNotMatch(text, /taken as empty/);
    const doc = traceDoc(a);
    assert.deepEqual(doc.tablesNotRead, ['filter']);
    assert.deepEqual(
      doc.outcomes.map((o) => o.fateKnown),
      [undefined, false],
    );
    assert.match(traceSummary(doc), /50% not known past the cut/);
  });

  it('states no verdict, delivery or masquerade for the outcome not known (r138)', async () => {
    const a = await walk(92);
    const [known, unknown] = traceDoc(a).outcomes;
    assert.equal(known!.verdict, 'ACCEPT');
    assert.equal(known!.delivery, 'forward');
    assert.equal(typeof known!.masquerade, 'boolean');
    assert.equal(unknown!.verdict, null);
    assert.equal(unknown!.delivery, null);
    assert.equal(unknown!.masquerade, null);
    // PREROUTING -> KUBE-SERVICES -> KUBE-SVC-...: the POSTROUTING rules after hold only if the
    // rules past the cut let it on unchanged
    assert.equal(unknown!.rulesKnown, 2);
    assert.ok(unknown!.rules.length > 2);
    const text = traceText(a);
    const out2 = text.slice(text.indexOf('outcome 2:'));
    const at = out2.indexOf('not matched as read: the packet meets these only if the rules past');
    assert.ok(at > 0, out2);
    assert.ok(out2.indexOf('KUBE-SVC-ELCM5PCEQWBTUJ2I\n') < at);
    assert.ok(out2.indexOf('POSTROUTING') > at);
    // the known outcome lists its rules as matched
    const out1 = text.slice(text.indexOf('outcome 1:'), text.indexOf('outcome 2:'));
    assert.doesNotMatch(out1, /not matched as read/);
  });

  it('the whole dump: every outcome known, forwarded as read', async () => {
    const a = await walk();
    const doc = traceDoc(a);
    assert.equal(doc.tablesNotRead, undefined);
    assert.ok(doc.outcomes.every((o) => o.fateKnown === undefined));
    assert.match(traceText(a), /DNAT to 10\.244\.0\.3:80, forwarded, /);
  });
});

describe('trace over a dump without a nat table', () => {
  it('says the Service rules were not read, not that kube-proxy did not write them', async () => {
    const facts = await readSnapshot('snapshots/nginx-svc');
    const dump = facts.nodes[NODE]!['iptables-save']!;
    // the filter table alone: iptables-save -t filter
    facts.nodes[NODE]!['iptables-save'] = dump.slice(dump.indexOf('*filter'));
    const analysis = new Analysis(facts, { code: allModes });
    const result = analysis.node(NODE).trace({
      src: '10.244.0.5',
      dst: '10.1.190.219',
      dport: 8080,
      protocol: 'tcp',
      fromHost: false,
    });
    const a = traceAnswer(result, analysis.view, NODE);
    assert.deepEqual(result.tablesNotRead, ['nat']);
    assert.match(
      a.unmatched ?? '',
      /holds no nat table, where kube-proxy writes its Service rules/,
    );
    assert.doesNotMatch(a.unmatched ?? '', /has not written/);
    assert.equal(a.unanswered, false);
  });
});
