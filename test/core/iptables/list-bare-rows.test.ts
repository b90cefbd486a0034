// `iptables -L` rows pasted without any Chain line (`iptables -nt nat -L -v | grep PORT`): read
// in the columns the typed -L prints (getopt's bundled and abbreviated options), else in the one
// set of columns their shape fits; each placed in the chain kube-proxy writes such a rule in, or
// said not read where no one chain is provable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  listColumns,
  listedTable,
  typedOptions,
} from '../../../src/core/dataplane/iptables/read/paste/list-view/command.js';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const read = (text: string) => {
  const got = readPaste(text, { file: 'paste.txt' });
  assert.ok(got.mode === 'iptables', 'message' in got ? got.message : got.mode);
  return {
    got,
    text: rulesText(got.dump, got.trees, { label: 'file paste.txt', file: 'paste.txt' }),
  };
};

const V_ROW =
  '    0     0 KUBE-EXT-XNA7EOYKP5F2R2QR  tcp  --  *      *       0.0.0.0/0            0.0.0.0/0            /* app/app:http */ tcp dpt:30011';

describe('-L rows with no Chain line in the paste', () => {
  it("the options iptables' getopt reads: bundled, abbreviated, with the table's argument", () => {
    assert.deepEqual(listColumns('iptables -nt nat --list -v | grep 30011'), {
      num: false,
      counters: true,
      interfaces: true,
    });
    assert.deepEqual(listColumns('# iptables -t nat -nL --line KUBE-NODEPORTS'), {
      num: true,
      counters: false,
      interfaces: false,
    });
    assert.deepEqual(listColumns('sudo iptables --verb -t nat -L -n'), {
      num: false,
      counters: true,
      interfaces: true,
    });
    // -S lists no columns; -t's argument "Lv" is a table's name, no -L
    assert.equal(listColumns('iptables -t nat -S'), undefined);
    assert.equal(listColumns('iptables -tLv -S'), undefined);
    assert.equal(listedTable('iptables -nt nat --list -v | grep 30011')?.table, 'nat');
    assert.equal(listedTable('iptables -nvt mangle -L')?.table, 'mangle');
  });

  it('the chain -L names (its optional argument: the next word, or the rest of its word)', () => {
    const chain = (args: string) => typedOptions(args).chain;
    assert.equal(chain('-t nat -nvL KUBE-SERVICES'), 'KUBE-SERVICES');
    assert.equal(chain('-t nat --list KUBE-SERVICES -n'), 'KUBE-SERVICES');
    assert.equal(chain('-t nat --list=KUBE-NODEPORTS'), 'KUBE-NODEPORTS');
    assert.equal(chain('-nLKUBE-NODEPORTS -t nat'), 'KUBE-NODEPORTS');
    assert.equal(chain('-t nat -nL --line-numbers'), undefined);
    assert.equal(chain('-t nat -L -n'), undefined);
  });

  it('rows under a -L that names its chain: read in that chain, from the command typed', () => {
    const { got, text } = read(
      ['# iptables -t nat -nvL KUBE-SERVICES | grep 30011', V_ROW].join('\n'),
    );
    assert.deepEqual(
      got.dump.tables.flatMap((t) => t.chains.map((c) => c.name)),
      ['KUBE-SERVICES'],
    );
    assert.match(
      text,
      /line 2 read as KUBE-SERVICES's, the chain the `iptables -L` typed on line 1 lists, from the command typed/,
    );
    assert.doesNotMatch(text, /KUBE-NODEPORTS|inferred/);
  });

  it('one --line-numbers row under a -L that names its chain: a -L listing, read', () => {
    const { got, text } = read(
      [
        '# iptables -t nat -nL KUBE-SERVICES --line-numbers | grep app',
        '5    KUBE-SVC-XNA7EOYKP5F2R2QR  tcp  --  0.0.0.0/0            10.96.12.34          /* app/app:http cluster IP */ tcp dpt:80',
      ].join('\n'),
    );
    const t = got.trees.services.find((s) => s.id === 'app/app:http');
    assert.ok(t, text);
    assert.match(text, /cluster IP 10\.96\.12\.34:80\/tcp\s+\(KUBE-SERVICES line 2/);
  });

  it('a -v row under the typed -L: read in its columns, in KUBE-NODEPORTS, of the nat table', () => {
    const { got, text } = read(
      ['```', 'iptables -nt nat --list -v | grep 30011', V_ROW, '```'].join('\n'),
    );
    const t = got.trees.services.find((s) => s.id === 'app/app:http');
    assert.ok(t, text);
    assert.deepEqual(t.nodePorts, [30011]);
    assert.deepEqual(
      got.dump.tables.map((x) => x.name),
      ['nat'],
    );
    assert.match(text, /line 3 read as KUBE-NODEPORTS's/);
    assert.match(text, /in the columns the `iptables -L` typed there \(line 2\) prints \(-v/);
    assert.match(text, /KUBE-EXT-XNA7EOYKP5F2R2QR\s+\(chain not in this paste/);
  });

  it('a row alone: the one set of columns its shape fits, said', () => {
    const { got, text } = read(V_ROW);
    assert.ok(
      got.trees.services.some((s) => s.nodePorts.includes(30011)),
      text,
    );
    assert.match(text, /read in the columns its shape shows.*\n?.*-v/);
  });

  it('--line-numbers rows: the number read as no count; a row no one chain holds is said not read', () => {
    const { got, text } = read(
      [
        '$ iptables -t nat -n -L --line-numbers | grep web',
        '3    KUBE-SVC-AAAAAAAAAAAAAAAA  tcp  --  0.0.0.0/0            0.0.0.0/0            /* default/web:http */ tcp dpt:30080',
        '1    KUBE-SEP-BBBBBBBBBBBBBBBB  all  --  0.0.0.0/0            0.0.0.0/0            /* default/web:http -> 10.244.1.5:80 */',
      ].join('\n'),
    );
    const t = got.trees.services.find((s) => s.id === 'default/web:http');
    assert.ok(t, text);
    assert.deepEqual(t.nodePorts, [30080]);
    assert.match(text, /line 2 read as KUBE-NODEPORTS's/);
    assert.match(text, /line 3 not read \(nothing kube-proxy writes in it names one chain/);
  });

  it('rows the typed -L does not print (no -v, counts before the target) are not read by their shape', () => {
    assert.throws(
      () => readPaste(['# iptables -t nat -n -L | grep 30011', V_ROW].join('\n'), { file: 'p' }),
      /its columns are not the ones iptables prints/,
    );
  });

  it('rows whose chain nothing names: said as -L rows without their Chain line, with what to run', () => {
    const rows = [
      'Rules of the Service:',
      '',
      '    0     0 KUBE-MARK-MASQ  all  --  *      *       0.0.0.0/0            0.0.0.0/0            /* masquerade traffic for default/web external destinations */',
      '    5   300 KUBE-MARK-MASQ  tcp  --  *      *      !10.244.0.0/16        10.96.0.1            /* default/web:http cluster IP */ tcp dpt:80',
    ].join('\n');
    assert.throws(
      () => readPaste(rows, { file: 'p.txt' }),
      (e: Error) =>
        /lines 3, 4 are rows of `iptables -L` without their Chain line \(their targets are the nat table's\), and neither the paste nor a -L typed in it names the chain/.test(
          e.message,
        ) &&
        /run `iptables -t nat -L CHAIN -n -v`/.test(e.message) &&
        !/not a line of iptables-save|empty/.test(e.message),
    );
  });
  it("rows whose targets are one table's (kube-router's KUBE-POD-FW, REJECT): that table asked for", () => {
    const rows = [
      'KUBE-POD-FW-W2QZCVW5MWAHBHSC  all  --  anywhere             10.42.0.84           /* rule to jump traffic destined to POD name:web namespace: default to chain KUBE-POD-FW-W2QZCVW5MWAHBHSC */',
      '    0     0 REJECT     tcp  --  *      *       0.0.0.0/0            10.96.0.5            /* default/web:http has no endpoints */ tcp dpt:80 reject-with icmp-port-unreachable',
    ];
    const said = (text: string) => {
      try {
        readPaste(text, { file: 'p.txt' });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    assert.match(
      said(rows[0]!),
      /its target is the filter table's\).*run `iptables -t filter -L CHAIN -n -v`.*`iptables-save -t filter`/,
    );
    assert.match(said(rows[1]!), /run `iptables -t filter -L CHAIN/);
    // a row of each table shows none: nat, where kube-proxy's Service rules are, is asked for
    const mixed = `${rows[1]!}\n    5   300 KUBE-MARK-MASQ  tcp  --  *      *      !10.244.0.0/16        10.96.0.1            /* default/web:http cluster IP */ tcp dpt:80`;
    assert.match(said(mixed), /Chain line, and .*run `iptables -t nat -L CHAIN/);
  });

  it("a cluster IP's jump to its Service chain is read as KUBE-SERVICES's: its Service entry", () => {
    const paste = [
      '# iptables -t nat -L | grep payment',
      'KUBE-MARK-MASQ  tcp  -- !10.244.0.0/16        10.109.104.9         /* sock-shop/payment: cluster IP */ tcp dpt:http',
      'KUBE-SVC-T7TCZ5NWHRXELJYN  tcp  --  anywhere             10.109.104.9         /* sock-shop/payment: cluster IP */ tcp dpt:http',
    ].join('\n');
    const { got, text } = read(paste);
    assert.match(text, /line 3 read as KUBE-SERVICES's/);
    assert.doesNotMatch(text, /KUBE-SERVICES is not in it/);
    const tree = got.trees.services.find((t) => t.clusterIP === '10.109.104.9')!;
    assert.deepEqual([tree.port, tree.entries[0]?.line], [80, 3]);
  });
});
