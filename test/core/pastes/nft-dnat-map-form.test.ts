// A rule in a DNAT form kdebug does not read, though nft's grammar takes it (`dnat ip addr . port
// to KEY map @MAP`: the address and port a map gives for a key the rule builds, as kubernetes
// #140362 proposed): that line is named with its line and what it is, every other line is read;
// the paste is never refused whole over it. Service CIDR 172.30.0.0/16, Pods 10.180.0.0/16.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../../src/output/rules.js';

const SVC = 'service-ULMVA6XW-ns1/svc1/tcp/p80';
const EP = 'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80';
const MAP_FORM =
  'meta l4proto tcp dnat ip addr . port to ip daddr . tcp dport . numgen random mod 1 map @endpoints-tcp';

const SCRIPT = [
  'add table ip kube-proxy',
  'add chain ip kube-proxy services',
  'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }',
  'add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips',
  `add chain ip kube-proxy ${SVC}`,
  `add chain ip kube-proxy ${EP}`,
  `add rule ip kube-proxy ${SVC} numgen random mod 1 vmap { 0 : goto ${EP} }`,
  `add rule ip kube-proxy ${EP} meta l4proto tcp dnat to 10.180.0.1:80`,
  'add chain ip kube-proxy lb-1-endpoints',
  `add rule ip kube-proxy lb-1-endpoints ${MAP_FORM}`,
  `add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto ${SVC} }`,
  '',
].join('\n');

const LISTING = [
  'table ip kube-proxy {',
  '\tmap service-ips {',
  '\t\ttype ipv4_addr . inet_proto . inet_service : verdict',
  `\t\telements = { 172.30.0.41 . tcp . 80 : goto ${SVC} }`,
  '\t}',
  '\tchain services {',
  '\t\tip daddr . meta l4proto . th dport vmap @service-ips',
  '\t}',
  `\tchain ${SVC} {`,
  `\t\tnumgen random mod 1 vmap { 0 : goto ${EP} }`,
  '\t}',
  `\tchain ${EP} {`,
  '\t\tmeta l4proto tcp dnat ip to 10.180.0.1:80',
  '\t}',
  '\tchain lb-1-endpoints {',
  `\t\t${MAP_FORM.replace('addr . port to', 'to')}`,
  '\t}',
  '}',
  '',
].join('\n');

const read = (text: string) => {
  const x = readPaste(text, { file: 'p.nft' });
  assert.ok(x.mode === 'nftables', x.mode === 'not-kube-proxy' ? x.message : x.mode);
  return { x, text: rulesText(x.dump, x.trees, { label: 'paste' }) };
};

describe('a DNAT through a map nft takes and kdebug does not read', () => {
  for (const [form, text, line] of [
    ['the script kube-proxy feeds nft -f', SCRIPT, 10],
    ['nft list', LISTING, 16],
  ] as const)
    it(`${form}: the Service read, that line named with what it is`, () => {
      const { x, text: said } = read(text);
      const svc = x.trees.services.find((t) => t.name === 'ns1/svc1:p80');
      assert.deepEqual(
        svc?.endpoints.map((e) => `${e.address} ${e.probability}`),
        ['10.180.0.1:80 1'],
        said,
      );
      assert.match(
        said,
        new RegExp(
          `line ${line}: not read \\(in chain lb-1-endpoints\\): a DNAT to the address and port map @endpoints-tcp gives for the key ip daddr \\. tcp dport \\. numgen random mod 1`,
        ),
      );
    });

  it('a map written in the rule is named so', () => {
    const { text } = read(
      SCRIPT.replace('map @endpoints-tcp', 'map { 172.30.0.41 . 80 . 0 : 10.180.0.1 . 80 }'),
    );
    assert.match(text, /a DNAT to the address and port a map written in the rule gives/);
  });
});
