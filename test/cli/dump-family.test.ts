// A node's dump whose contents say the other family than the command it is saved under: read as
// its name says it would compare nothing, so it is named as not compared, never "no drift".
//
// IP conventions (the demo cluster): nodes vm-12-7-centos 10.0.12.7, vm-12-11-centos 10.0.12.11;
// Pod CIDR 10.244.0.0/16; nginx-svc 10.1.190.219:8080 -> 10.244.0.3:80, 10.244.1.7:80.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const NODE = 'vm-12-11-centos';

/** The demo with NODE's iptables-save (IPv4 rules) saved as ip6tables-save.txt, its save line
 * kept or dropped. */
function ip6Named(saveLine: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'kdebug-ip6-named-'));
  cpSync('snapshots/nginx-svc', dir, { recursive: true });
  const from = join(dir, `nodes/${NODE}/iptables-save.txt`);
  const to = join(dir, `nodes/${NODE}/ip6tables-save.txt`);
  renameSync(from, to);
  if (!saveLine)
    writeFileSync(
      to,
      readFileSync(to, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('# '))
        .join('\n'),
    );
  return dir;
}

describe('an ip6tables-save.txt that an iptables dump of IPv4 rules', () => {
  for (const [saveLine, shown] of [
    [true, /its save line names iptables-save and its nat rules hold IPv4 addresses/],
    [false, /its nat rules hold IPv4 addresses/],
  ] as const)
    it(`${saveLine ? 'with' : 'without'} its save line: drift names the file as not compared (exit 2), rules refuses it`, () => {
      const dir = ip6Named(saveLine);
      try {
        const r = kdebug(['drift', '--snapshot', dir, '--all-nodes', '-o', 'json']);
        assert.equal(r.code, 2, r.stderr);
        const doc = JSON.parse(r.stdout);
        // no IPv6 rule set of NODE was compared: nothing is said "no drift" of it
        assert.deepEqual(
          doc.nodes.map((n: { node: string; family: string }) => [n.node, n.family]),
          [['vm-12-7-centos', 'IPv4']],
        );
        const six = doc.notCompared.find((n: { family: string }) => n.family === 'IPv6');
        assert.equal(six?.node, NODE);
        assert.match(
          six.why,
          new RegExp(`nodes/${NODE}/ip6tables-save\\.txt:\\d+: an iptables dump of IPv4 rules`),
        );
        assert.match(six.why, shown);
        const rules = kdebug(['rules', '--snapshot', dir, '--node', NODE, '-o', 'json']);
        assert.equal(rules.code, 2, rules.stdout);
        assert.match(
          rules.stderr,
          /ip6tables-save\.txt:\d+: an iptables dump of IPv4 rules .*yet ip6tables-save prints IPv6 rules/,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

  it('a real ip6tables-save (IPv6 addresses) is read as IPv6, as before', () => {
    const r = kdebug([
      'drift',
      '--snapshot',
      'snapshots/dual-stack-ipv6-rules-missing',
      '--all-nodes',
      '-o',
      'json',
    ]);
    const doc = JSON.parse(r.stdout);
    assert.ok(
      doc.nodes.some((n: { family: string }) => n.family === 'IPv6'),
      r.stdout,
    );
    assert.deepEqual(doc.notCompared, []);
  });
});
