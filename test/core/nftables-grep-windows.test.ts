// nft's listing piped through `grep -A N`: each window is the lines after a match, grep's "--"
// between two. A window may end inside a map's wrapped element list; the next window is another
// block's, never more elements of that list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNftText } from '../../src/core/dataplane/nftables/read/read-text.js';

const GREPPED = `# nft list table ip kube-proxy | grep -A3 'map '
	map no-endpoint-services {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "vmap to drop or reject packets to services with no endpoints"
		elements = { 10.96.5.5 . tcp . 80 comment "ns/a:http" : goto reject-chain,
--
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { 10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
`;

describe("grep's windows over nft's listing", () => {
  it('a "--" ends a wrapped element list: the next window\'s map is read as its own', () => {
    const [table] = parseNftText(GREPPED, 'p').tables;
    assert.deepEqual(
      table!.sets.map((s) => [s.name, s.elements.length, s.elided === true]),
      [
        ['no-endpoint-services', 1, true],
        ['service-ips', 1, false],
      ],
    );
    assert.deepEqual(table!.elided, [6]);
  });

  it('a "--" ends a cut map: the next window\'s chain holds its own rules, read', () => {
    const [table] = parseNftText(
      `# nft list table ip kube-proxy | grep -A4 -e "map service-ips" -e "chain service-"
\tmap service-ips {
\t\ttype ipv4_addr . inet_proto . inet_service : verdict
\t\tcomment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
\t\telements = { 10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,
\t\t\t     10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https,
--
\tchain service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp {
\t\tip daddr 10.96.0.10 tcp dport 53 ip saddr != 10.244.0.0/16 jump mark-for-masquerade
\t\tnumgen random mod 1 vmap { 0 : goto endpoint-ABC-kube-system/kube-dns/tcp/dns-tcp__10.244.0.2/53 }
\t}
`,
      'p',
    ).tables;
    assert.deepEqual(
      table!.chains.map((c) => [c.name, c.rules.length]),
      [['service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp', 2]],
    );
    assert.equal(table!.unread, undefined);
    assert.equal(table!.sets[0]!.elided, true);
  });
});
