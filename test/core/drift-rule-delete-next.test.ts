// The command that deletes a rule kube-proxy does not write is the rule's words, quoted when
// shown: a comment in the dump that holds shell ("$(touch ...)") reaches iptables as one word and
// is never run, on the node itself, inside `kubectl debug` or inside ssh's remote line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { nodeDrift } from '../../src/core/dataplane/iptables/drift/drift.js';
import { optionsFromDump } from '../../src/core/dataplane/kube-proxy/knobs.js';
import { expectedRules, expectedSave } from '../../src/core/dataplane/kube-proxy/expected.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { clusterView } from '../../src/core/kube/objects.js';
import {
  iptablesDelete,
  iptablesWords,
  resolveNext,
  shellLine,
} from '../../src/core/findings/next-command.js';
import { aKubeProxyConfig, aNode, aService, anEndpointSlice } from '../support/builders.js';

const NODE = 'test-node';
const view = clusterView([
  aNode(NODE, '192.168.0.2', '10.180.0.0/24'),
  aKubeProxyConfig('clusterCIDR: 10.0.0.0/8\n'),
  aService('ns1/web', { clusterIP: '172.30.0.41' }),
  anEndpointSlice('ns1/web', ['10.180.0.1']),
]);
const clean = expectedSave(expectedRules(view, NODE, { randomFully: true }));

function finding(rule: string) {
  const at = clean.indexOf('\n-A KUBE-SERVICES ', clean.indexOf('*nat')) + 1;
  const rs = parseIptables(`${clean.slice(0, at)}${rule}\n${clean.slice(at)}`, { file: 'test' });
  const d = nodeDrift({
    node: NODE,
    source: 'test',
    expected: expectedRules(view, NODE, optionsFromDump(rs)),
    actual: rs,
    view,
  });
  const f = d.findings.find((x) => x.id === 'service-traffic-diverted');
  assert.ok(f, d.findings.map((x) => x.id).join(', '));
  return f;
}

/** The words a POSIX shell makes of a line (printf is its builtin: nothing else can run). */
function shellSplit(line: string): string[] {
  const r = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${line}`], {
    env: { PATH: '/nonexistent' },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  return r.stdout.split('\0').slice(0, -1);
}

const HOSTILE = '$(touch${IFS}/tmp/PWNED)';
const RULE = `-A KUBE-SERVICES -d 172.30.0.41/32 -p tcp -m comment --comment "${HOSTILE} \`id\` ; rm" -m tcp --dport 80 -j RETURN`;
const WANT = [
  'iptables',
  '-t',
  'nat',
  '-D',
  'KUBE-SERVICES',
  '-d',
  '172.30.0.41/32',
  '-p',
  'tcp',
  '-m',
  'comment',
  '--comment',
  `${HOSTILE} \`id\` ; rm`,
  '-m',
  'tcp',
  '--dport',
  '80',
  '-j',
  'RETURN',
];

describe('drift: the command that deletes a rule kube-proxy does not write', () => {
  it('is the rule as argv; its advice holds no rule text', () => {
    const f = finding(RULE);
    assert.ok(f.next);
    assert.deepEqual(f.next.argv, WANT);
    assert.equal(f.next.node, NODE);
    assert.doesNotMatch(f.advice ?? '', /touch|--comment|-D /);
    assert.doesNotMatch(JSON.stringify({ advice: f.advice }), /touch/);
  });

  it('printed, a POSIX shell reads it back as exactly those words, on the node and off it', () => {
    const next = finding(RULE).next!;
    assert.deepEqual(shellSplit(shellLine(next)), WANT);
    const debug = resolveNext(next);
    assert.deepEqual(shellSplit(shellLine(debug)), debug.argv);
    assert.deepEqual(debug.argv.slice(-WANT.length), WANT);
    // ssh sends one line for the remote shell: read twice, it is the command again
    const ssh = resolveNext(next, { ssh: { [NODE]: ['ssh', 'core@192.0.2.10'] } });
    const words = shellSplit(shellLine(ssh));
    assert.deepEqual(words, ssh.argv);
    assert.deepEqual(shellSplit(words.at(-1)!), ['sudo', ...WANT]);
  });

  it('is not offered when a word would carry what a terminal obeys, or the text is not a rule', () => {
    for (const bad of ['\x1b]0;x\x07', '\u202e', '\u009b2J', 'a\tb'])
      assert.equal(
        iptablesDelete(
          NODE,
          'IPv4',
          'nat',
          `-A KUBE-SERVICES -m comment --comment "${bad}" -j ACCEPT`,
        ),
        undefined,
        JSON.stringify(bad),
      );
    assert.equal(
      iptablesDelete(NODE, 'IPv4', 'nat', '-A X -m comment --comment "a" b" -j A'),
      undefined,
    );
    assert.equal(iptablesDelete(NODE, 'IPv4', 'nat', '-I X 1 -j ACCEPT'), undefined);
    assert.equal(iptablesDelete(NODE, 'IPv4', 'n;at', '-A X -j ACCEPT'), undefined);
    assert.equal(iptablesDelete('No$de', 'IPv4', 'nat', '-A X -j ACCEPT'), undefined);
    // a space outside a comment is words run together
    assert.equal(iptablesDelete(NODE, 'IPv4', 'nat', '-A X -j "ACC EPT"'), undefined);
    assert.deepEqual(iptablesDelete(NODE, 'IPv6', 'filter', '-A X -j DROP')?.argv, [
      'ip6tables',
      '-t',
      'filter',
      '-D',
      'X',
      '-j',
      'DROP',
    ]);
    assert.deepEqual(iptablesWords('-A X -m comment --comment "a \\"b\\" \\\\c" -j A'), [
      '-A',
      'X',
      '-m',
      'comment',
      '--comment',
      'a "b" \\c',
      '-j',
      'A',
    ]);
  });
});
