// kube-proxy's IPVS mode writes KUBE-SERVICES in the nat table with ipset matches alone (no chain
// per Service): a dump of it holds KUBE-SERVICES and no Service entry, and is said to be so, never
// to lack KUBE-SERVICES.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

/** `rules --file -` of the text, its wrapped lines joined. */
function said(text: string): string {
  const r = kdebug(['rules', '--file', '-'], { input: text });
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.replace(/\s+/g, ' ');
}

const IPVS_WORDS =
  "no Service rules: the paste's KUBE-SERVICES holds no per-Service entries, as kube-proxy's IPVS mode writes it: the Services are IPVS virtual servers (`ipvsadm -Ln` lists them)";

describe('an IPVS-mode nat table: KUBE-SERVICES held, its Services in IPVS', () => {
  it('a whole nat table of IPVS mode (the ipvs-stale-real-server snapshot node)', () => {
    const text = readFileSync(
      new URL(
        '../../snapshots/ipvs-stale-real-server/nodes/vm-12-7-centos/iptables-save.txt',
        import.meta.url,
      ),
      'utf8',
    );
    const out = said(text);
    assert.ok(out.includes(IPVS_WORDS), out);
    assert.doesNotMatch(out, /no KUBE-SERVICES/);
  });

  it('a published `iptables -t nat -nL` of IPVS mode', () => {
    const text = readFileSync(
      new URL(
        '../fixtures/pastes/iptables-t-nat-nL-ipvs-mode-match-set-readme.txt',
        import.meta.url,
      ),
      'utf8',
    );
    const out = said(text);
    assert.ok(out.includes(IPVS_WORDS), out);
  });

  it('KUBE-SERVICES with no Service entry and nothing of IPVS mode: said plainly, no mode named', () => {
    const out = said(
      '*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -j KUBE-SERVICES\n-A KUBE-SERVICES -s 127.0.0.0/8 -j RETURN\nCOMMIT\n',
    );
    assert.match(
      out,
      /no Service rules found: KUBE-SERVICES in the nat table holds no per-Service entries/,
    );
    assert.doesNotMatch(out, /IPVS/);
  });

  it('a whole nat table without KUBE-SERVICES: said to hold none', () => {
    const out = said(
      '*nat\n:PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -s 10.244.0.0/16 -j MASQUERADE\nCOMMIT\n',
    );
    assert.match(out, /no Service rules found: the nat table holds no KUBE-SERVICES chain/);
  });
});
