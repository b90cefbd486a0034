// The whole TUI driven by keys, on the demo snapshot (IP conventions of the demo cluster: Pod
// CIDR 10.244.0.0/16, nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80 and 10.244.1.7:80).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { Facts } from '../../src/core/model.js';
import { App, type AppProps, type TuiExit } from '../../src/tui/App.js';
import type { PartialFacts } from '../../src/tui/input.js';
import type { CollectProgress } from '../../src/cluster/collect.js';
import { questions } from '../../src/tui/questions.js';
import { diagnosed, frame, press, render, settle, waitFrame } from './harness.js';
import { allModes } from '../support/modes.js';

const facts = await readSnapshot(new URL('../../snapshots/nginx-svc', import.meta.url).pathname);
const TARGET = { namespace: 'default', service: 'nginx-svc' };
/** Facts as a read hands them over: with every mode's code. */
const coded = (f: Facts) => ({ facts: f, code: allModes });
const SIZE = { columns: 80, rows: 24 };

async function app(props: Partial<AppProps> = {}) {
  const r = render(
    <App
      start="diag"
      target={TARGET}
      facts={coded(facts)}
      load={async () => coded(facts)}
      color={false}
      size={SIZE}
      {...props}
    />,
  );
  await settle(30);
  if ((props.facts ?? facts) !== undefined && !('facts' in props && props.facts === undefined))
    await diagnosed(r);
  return r;
}

const lines = (f: string) => f.split('\n');

describe('the TUI on the demo', () => {
  it('fits 80x24: 23 lines of at most 80 columns, one left free', async () => {
    const r = await app();
    const f = frame(r);
    assert.equal(lines(f).length, 23);
    assert.ok(lines(f).every((l) => [...l].length <= 80));
    r.unmount();
  });

  it('draws its first frame before the diagnosis, which follows it at once; q after it hands back the answer', async () => {
    let ended: TuiExit | undefined;
    const r = await app({ onQuit: (e) => (ended = e) });
    // every frame drawn is kept: the first one, then the diagnosis
    const first = r.frames[0] ?? '';
    assert.match(first, /⠋ +10 Hairpin/);
    assert.match(first, /diagnosing/);
    assert.match(first, /ctx kubernetes-admin@kubernetes/, 'the header from the first frame');
    const f = frame(r);
    assert.match(f, /✓ +10 Hairpin/);
    assert.doesNotMatch(f, /diagnosing/);
    r.stdin.write('q');
    await settle(20);
    assert.equal(ended?.ended, 'answered');
    r.unmount();
  });

  it('shows context, namespace, Service, type, ClusterIP:port and proxy mode on top', async () => {
    const r = await app();
    const [top, second] = lines(frame(r));
    assert.match(top!, /\[Diagnosis\].*ctx kubernetes-admin@kubernetes/);
    assert.equal(second, 'default/nginx-svc  ClusterIP 10.1.190.219:8080/TCP  mode iptables');
    r.unmount();
  });

  it('goes from a step to its rules on the node in two keys', async () => {
    const r = await app();
    // the Rules step, then enter (its findings), enter (the rules of its first finding's node)
    let f = await press(r, 'j', 'j', 'j', 'j', 'j', 'j');
    assert.match(f, /›✓ +7 Rules/);
    f = await press(r, 'enter', 'enter');
    assert.match(lines(f)[0]!, /\[Rules\]/);
    assert.match(f, /Rules +vm-12-11-centos \(1\/2, n\/p\)/);
    assert.match(f, /›▾ default\/nginx-svc:http 10\.1\.190\.219:8080\/tcp 2 endpoints/);
    // esc comes back to the step
    f = await press(r, 'esc');
    assert.match(lines(f)[0]!, /\[Diagnosis\]/);
    r.unmount();
  });

  it('/nginx then enter jumps to its chain in the Rules screen', async () => {
    const r = await app();
    let f = await press(r, '/', 'nginx');
    assert.match(f, /\/nginx▏/);
    assert.match(f, /›service +default\/nginx-svc:http/);
    f = await press(r, 'enter');
    assert.match(lines(f)[0]!, /\[Rules\]/);
    assert.match(f, /›▾ default\/nginx-svc:http/);
    r.unmount();
  });

  it('search results update with every key, and esc closes without moving', async () => {
    const r = await app();
    const f1 = await press(r, '/', '10.244.1');
    assert.match(f1, /endpoint +10\.244\.1\.7:80/);
    const f2 = await press(r, '.', '2');
    assert.doesNotMatch(f2, /10\.244\.1\.7:80/);
    const f3 = await press(r, 'esc');
    assert.match(lines(f3)[0]!, /\[Diagnosis\]/);
    r.unmount();
  });

  it(':drift, :trace, :rules and :diag switch screens; an unknown name says so', async () => {
    const r = await app();
    for (const [name, title] of [
      ['drift', 'Drift'],
      ['trace', 'Trace'],
      ['rules', 'Rules'],
      ['diag', 'Diagnosis'],
    ]) {
      const f = await press(r, ':', name!, 'enter');
      assert.match(lines(f)[0]!, new RegExp(`\\[${title}\\]`), name);
    }
    const f = await press(r, ':', 'nope', 'enter');
    assert.match(lines(f).at(-1)!, /unknown screen ":nope"/);
    r.unmount();
  });

  it('the Drift screen shows each node against what kube-proxy would write', async () => {
    const r = await app();
    let f = await press(r, ':', 'drift', 'enter');
    assert.match(f, /Drift +vm-12-11-centos \(1\/2, n\/p\)/);
    assert.match(f, /- missing \(expected, not on the node\) +\+ unexpected/);
    f = await press(r, 'n');
    assert.match(f, /Drift +vm-12-7-centos \(2\/2, n\/p\)/);
    r.unmount();
  });

  it('the Trace screen walks a Pod to nginx-svc: two branches, the hairpin one masqueraded', async () => {
    const r = await app();
    const f = await press(r, ':', 'trace', 'enter');
    assert.match(f, /›Pod 10\.244\.1\.7 nginx-55fc968d9-4pddn/);
    assert.match(f, /›10\.1\.190\.219:8080\/tcp nginx-svc:http/);
    assert.match(f, /50% +DNAT to 10\.244\.0\.3:80 +not masqueraded/);
    assert.match(f, /50% +DNAT to 10\.244\.1\.7:80 +masqueraded/);
    r.unmount();
  });

  it('pinging a ClusterIP: no rule matches it', async () => {
    const r = await app();
    const f = await press(r, ':', 'trace', 'enter', 'tab', 'j');
    assert.match(f, /›ping 10\.1\.190\.219/);
    assert.match(f, /no rule matched: routed unchanged/);
    r.unmount();
  });

  it('? shows the help from the keymap; esc closes it', async () => {
    const r = await app();
    let f = await press(r, '?');
    assert.match(f, /Keys/);
    assert.match(f, /ctrl\+r +re-collect the facts/);
    f = await press(r, 'esc');
    assert.doesNotMatch(f, /re-collect the facts/);
    r.unmount();
  });

  it('q quits and hands back the last Report', async () => {
    let quit: TuiExit | undefined;
    const r = await app({ onQuit: (e) => (quit = e) });
    await press(r, 'q');
    assert.equal(quit?.ended, 'answered');
    assert.equal(quit.ended === 'answered' && quit.report?.status, 'pass');
    r.unmount();
  });

  it('keys typed faster than a read are taken one by one', async () => {
    const r = await app();
    r.stdin.write('jjj\r');
    const f = await waitFrame(r, /┃Findings/);
    assert.match(f, /›✓ +4 Endpoints/);
    assert.match(f, /┃Findings/); // enter moved the focus to the findings
    r.unmount();
  });

  it('several backspaces arriving together in the command line are all applied', async () => {
    const r = await app();
    r.stdin.write(':');
    r.stdin.write('drxx');
    await waitFrame(r, /:drxx▏/);
    r.stdin.write('\x7f\x7f');
    await waitFrame(r, /:dr▏/);
    r.stdin.write('\t');
    await waitFrame(r, /:drift▏/);
    r.unmount();
  });
});

describe('live', () => {
  it('shows pending steps and what is being read, then the results as they arrive', async () => {
    let finish: (f: Facts) => void = () => undefined;
    let report: (p: CollectProgress) => void = () => undefined;
    const r = await app({
      facts: undefined,
      load: (progress) => {
        report = progress;
        return new Promise<Facts>((resolve) => (finish = resolve)).then(coded);
      },
    });
    report({ what: 'Service default/nginx-svc', state: 'start' });
    report({ what: 'iptables-save', node: 'vm-12-7-centos', state: 'start' });
    let f = await waitFrame(r, /node vm-12-7-centos: iptables-save \d+s \(\+1 more\)$/);
    assert.match(f, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] +1 Service/);
    assert.match(lines(f)[1]!, /default\/nginx-svc +reading…/);
    report({ what: 'iptables-save', node: 'vm-12-7-centos', state: 'done' });
    await waitFrame(r, /reading Service default\/nginx-svc \d+s$/);
    finish(facts);
    f = await waitFrame(r, /✓ +1 Service/);
    assert.doesNotMatch(f, /reading/);
    r.unmount();
  });

  it(':svc to another Service: its name in the header and its steps pending while it is read, never the one left', async () => {
    let finish: (f: Facts) => void = () => undefined;
    const asked: string[] = [];
    const r = await app({
      facts: undefined,
      load: async () => coded(facts),
      loadFor: (t) => () => {
        asked.push(`${t.namespace}/${t.service}`);
        return new Promise<Facts>((resolve) => (finish = resolve)).then(coded);
      },
    });
    await waitFrame(r, /✓ +1 Service/);
    await press(r, ':svc kube-system/kube-dns', 'enter');
    const f = await waitFrame(r, /kube-system\/kube-dns +reading…/);
    assert.deepEqual(asked, ['kube-system/kube-dns']);
    assert.doesNotMatch(f, /nginx-svc|ClusterIP 10\.1\.190\.219/);
    assert.match(f, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] +1 Service/);
    finish(facts);
    await waitFrame(r, /kube-system\/kube-dns +ClusterIP/);
    r.unmount();
  });

  it('runs the steps whose facts have arrived while the nodes are still read', async () => {
    let finish: (f: Facts) => void = () => undefined;
    let partial: PartialFacts = () => undefined;
    const r = await app({
      facts: undefined,
      load: (_progress, p) => {
        partial = p;
        return new Promise<Facts>((resolve) => (finish = resolve)).then(coded);
      },
    });
    await waitFrame(r, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] +1 Service/);
    // the API objects are in, the node commands are not
    partial(coded({ ...facts, nodes: {} }), { nodes: true });
    let f = await waitFrame(r, /✓ +1 Service/);
    assert.match(f, /✓ +3 Selector/);
    assert.match(f, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] +7 Rules/);
    finish(facts);
    f = await waitFrame(r, /✓ +7 Rules/);
    assert.doesNotMatch(f, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] +\d+ /);
    r.unmount();
  });

  it('asks before debug Pods are created, and goes on with the answer', async () => {
    const asks = questions();
    const answers: boolean[] = [];
    let finish: (f: Facts) => void = () => undefined;
    const r = await app({
      facts: undefined,
      questions: asks,
      load: async () => {
        answers.push(await asks.ask(['kdebug would create a debug Pod on vm-12-11-centos.']));
        answers.push(await asks.ask(['and one more question']));
        return new Promise<Facts>((resolve) => (finish = resolve)).then(coded);
      },
    });
    let f = await waitFrame(r, /Create debug Pods\?/);
    assert.match(f, /kdebug would create a debug Pod on vm-12-11-centos\./);
    assert.match(f, /^y yes n no \(ctrl\+c quits\)$/m);
    // other keys do nothing while it waits
    f = await press(r, 'j', ':');
    assert.match(f, /Create debug Pods\?/);
    await press(r, 'y');
    f = await waitFrame(r, /and one more question/);
    await press(r, 'n');
    await waitFrame(r, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] +1 Service/);
    assert.deepEqual(answers, [true, false]);
    finish(facts);
    await waitFrame(r, /✓ +7 Rules/);
    r.unmount();
  });

  it("a question's warnings are shown apart, after what it asks", async () => {
    const asks = questions();
    const r = await app({
      facts: undefined,
      questions: asks,
      load: async () => {
        await asks.ask(['create?'], ['namespace default is shared with workloads']);
        return coded(facts);
      },
    });
    const frame = await waitFrame(r, /Warning: namespace default is shared/);
    assert.ok(frame.indexOf('create?') < frame.indexOf('Warning:'), frame);
    r.unmount();
  });

  it('a question left open when the TUI ends is a no', async () => {
    const asks = questions();
    let answer: boolean | undefined;
    const r = await app({
      facts: undefined,
      questions: asks,
      load: async () => {
        answer = await asks.ask(['create?']);
        return coded(facts);
      },
    });
    await waitFrame(r, /Create debug Pods\?/);
    r.unmount();
    for (let i = 0; i < 50 && answer === undefined; i++) await settle(10);
    assert.equal(answer, false);
  });

  it('ctrl-r reads the facts again', async () => {
    let reads = 0;
    const r = await app({
      load: async () => {
        reads++;
        return coded(facts);
      },
    });
    assert.equal(reads, 0, 'the facts given are shown without reading');
    await press(r, 'ctrl+r');
    for (let i = 0; i < 100 && reads === 0; i++) await settle(10);
    assert.equal(reads, 1);
    r.unmount();
  });

  it('a failed read says which; the reason replaces the spinners, and q exits as failed', async () => {
    let quit: TuiExit | undefined;
    const r = await app({
      facts: undefined,
      load: async (progress) => {
        progress({ what: 'Nodes', state: 'failed', error: 'forbidden' });
        throw new Error('cannot read Service default/nginx-svc: forbidden');
      },
      onQuit: (e) => (quit = e),
    });
    await waitFrame(r, /^kdebug: cannot read Service default\/nginx-svc: forbidden/m);
    // the failed read's flash arrives in a render of its own, before or after the reason
    const f = await waitFrame(r, /reading Nodes failed: forbidden$/m);
    assert.match(f, /^kdebug: cannot read Service default\/nginx-svc: forbidden/m);
    assert.match(f, /q quits \(exit 2\) · ctrl\+r tries again/);
    assert.match(f, /reading Nodes failed: forbidden$/m);
    assert.doesNotMatch(f, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/, 'no spinner is left');
    await press(r, 'q');
    assert.deepEqual(quit, {
      ended: 'unread',
      reason: 'cannot read Service default/nginx-svc: forbidden',
    });
    r.unmount();
  });

  it('says how long each read may take while it waits', async () => {
    const r = await app({
      facts: undefined,
      deadlines: { apiMs: 15_000, nodeMs: 60_000 },
      load: (progress) => {
        progress({ what: 'iptables-save', node: 'vm-12-7-centos', state: 'start' });
        return new Promise<ReturnType<typeof coded>>(() => undefined);
      },
    });
    await waitFrame(r, /node vm-12-7-centos: iptables-save 0s \(gives up at 60s\)$/m);
    r.unmount();
  });
});

describe('leaving: the answer on screen, or none yet', () => {
  const CTRL_C = '\x03';
  const reading = () => new Promise<ReturnType<typeof coded>>(() => undefined); // a read that never ends
  const quitWith = async (props: Partial<AppProps>, ...keys: string[]) => {
    let quit: TuiExit | undefined;
    const r = await app({ ...props, onQuit: (e) => (quit = e) });
    await press(r, ...keys);
    r.unmount();
    return quit;
  };
  const ended = (e: TuiExit | undefined) => e?.ended;

  // one line per way out: what is on screen when the key comes, and how the run ended
  for (const [what, props, keys, want] of [
    ['q while the facts are read', { facts: undefined, load: reading }, ['q'], 'quit'],
    [
      'ctrl+c while the facts are read',
      { facts: undefined, load: reading },
      [CTRL_C],
      'interrupted',
    ],
    [
      ':q while the facts are read',
      { facts: undefined, load: reading },
      [':', 'q', 'enter'],
      'quit',
    ],
    ['q once the diagnosis is on screen', {}, ['q'], 'answered'],
    ['ctrl+c once the diagnosis is on screen', {}, [CTRL_C], 'answered'],
    ['q while ctrl+r reads again', { load: reading }, ['ctrl+r', 'q'], 'quit'],
    ['ctrl+c while ctrl+r reads again', { load: reading }, ['ctrl+r', CTRL_C], 'interrupted'],
    ['q after ctrl+r read again', {}, ['ctrl+r', 'q'], 'answered'],
  ] as const)
    it(`${what}: ${want}`, async () => {
      assert.equal(ended(await quitWith(props, ...keys)), want);
    });

  it('ctrl+c on the question before debug Pods is an interrupt; the question is a no', async () => {
    const asks = questions();
    let answer: boolean | undefined;
    const quit = await quitWith(
      {
        facts: undefined,
        questions: asks,
        load: async () => {
          answer = await asks.ask(['create?']);
          return reading();
        },
      },
      CTRL_C,
    );
    assert.equal(ended(quit), 'interrupted');
    assert.equal(answer, false);
  });

  it('a diagnosis left unfinished hands over what it had so far: the steps still pending', async () => {
    const quit = await quitWith({ facts: undefined, load: reading }, 'q');
    assert.equal(quit?.ended, 'quit');
    const report = quit.ended === 'quit' ? quit.report : undefined;
    assert.equal(report?.pending, true);
    assert.deepEqual(report?.target, TARGET);
  });

  it('the rules screens: q hands over no Report (nothing was diagnosed), and no answer while reading again', async () => {
    const empty: Facts = { objects: [], nodes: {}, meta: {} };
    const rules = { start: 'rules', target: undefined, facts: coded(empty) } as const;
    assert.deepEqual(await quitWith(rules, 'q'), { ended: 'answered', report: undefined });
    assert.deepEqual(await quitWith({ ...rules, load: reading }, 'ctrl+r', 'q'), {
      ended: 'quit',
      report: undefined,
    });
  });
});

describe('terminal size', () => {
  it('follows a resize live', async () => {
    const r = await app({ size: undefined });
    const out = r.stdout as unknown as { columns: number; rows: number; emit(e: string): void };
    Object.defineProperty(out, 'columns', { value: 120, configurable: true });
    Object.defineProperty(out, 'rows', { value: 30, configurable: true });
    out.emit('resize');
    let f = await waitFrame(r, /^.{120}$/mu);
    assert.equal(lines(f).length, 29);
    assert.equal(Math.max(...lines(f).map((l) => [...l].length)), 120);
    Object.defineProperty(out, 'columns', { value: 80, configurable: true });
    Object.defineProperty(out, 'rows', { value: 24, configurable: true });
    out.emit('resize');
    f = await waitFrame(r, /^┗━{26}┛└─{50}┘$/m);
    assert.equal(lines(f).length, 23);
    assert.equal(Math.max(...lines(f).map((l) => [...l].length)), 80);
    r.unmount();
  });

  it('says so when the terminal is too small', async () => {
    const r = await app({ size: { columns: 30, rows: 10 } });
    assert.match(frame(r), /kdebug needs at least 40x12 \(now 30x10\)/);
    r.unmount();
  });
});

describe('text from the cluster', () => {
  it('reaches the terminal without control characters', async () => {
    const evil = structuredClone(facts);
    const dump = evil.nodes['vm-12-7-centos']!['iptables-save']!;
    evil.nodes['vm-12-7-centos']!['iptables-save'] = dump.replaceAll(
      'default/nginx-svc:http cluster IP',
      'default/nginx-svc:http \x1b]0;pwned\x07\x1b[2J cluster IP',
    );
    evil.meta.context = 'ctx\x1b[31m-red';
    const r = await app({
      facts: { facts: evil, code: allModes },
      start: 'rules',
      node: 'vm-12-7-centos',
    });
    let f = await press(r, 'j', 'j', 'r');
    f += await press(r, '/', 'pwned');
    assert.doesNotMatch(f, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/); // eslint-disable-line no-control-regex
    // each control shown escaped, as text output shows it: the value the input holds
    assert.match(f, /ctx ctx\\x1b\[31m-red/);
    assert.match(f, /"default\/nginx-svc:http \\x1b\]0;pwned\\x07\\x1b\[2J cluster IP"/);
    assert.match(f, /rule +default\/nginx-svc:http \\x1b\]0;/, 'and in search results');
    r.unmount();
  });
});

describe('kdebug rules --file', () => {
  it('shows the trees of a pasted dump; the screens that need the cluster say so', async () => {
    const text = readFileSync(new URL('../fixtures/seed-nat-S.txt', import.meta.url), 'utf8');
    const empty: Facts = { objects: [], nodes: {}, meta: {} };
    const r = await app({
      start: 'rules',
      target: undefined,
      facts: { facts: empty, code: allModes },
      rules: { label: 'seed-nat-S.txt', text, table: 'nat' },
    });
    let f = frame(r);
    assert.match(lines(f)[1]!, /rules of seed-nat-S\.txt/);
    assert.match(f, /▸ default\/nginx-svc:http 10\.1\.190\.219:8080\/tcp 2 endpoints/);
    f = await press(r, ':', 'diag', 'enter');
    assert.match(f, /no Service diagnosed +┃│These rules were read without a Service/);
    f = await press(r, ':', 'drift', 'enter');
    assert.match(f, /drift compares the rules with the Services/);
    f = await press(r, ':', 'trace', 'enter');
    assert.match(f, /no Pods or nodes with rules/);
    r.unmount();
  });
});
