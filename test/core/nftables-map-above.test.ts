// A paste that starts inside one of kube-proxy's nftables maps, its `map NAME {` line above it:
// read as the map kube-proxy's nftables proxier writes with that key, comment and verdicts (IP .
// PROTO . PORT : goto service-HASH-ns/name/proto/port), the rest of the table not in the paste.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPaste } from '../../src/core/dataplane/paste/paste.js';
import { rulesText } from '../../src/output/rules.js';

const SERVICE_IPS = [
  '\t\ttype ipv4_addr . inet_proto . inet_service : verdict',
  '\t\tcomment "ClusterIP, ExternalIP and LoadBalancer IP traffic"',
  '\t\telements = { 10.96.0.10 . tcp . 53 : goto service-NWBZK7IH-kube-system/kube-dns/tcp/dns-tcp,',
  '\t\t\t     10.96.0.1 . tcp . 443 : goto service-2QRHZV4L-default/kubernetes/tcp/https,',
  '',
].join('\n');

const read = (text: string) => {
  const got = readPaste(text, { file: 'p.txt' });
  assert.ok(got.mode === 'nftables', 'message' in got ? got.message : got.mode);
  return { got, text: rulesText(got.dump, got.trees, { label: 'p' }) };
};

describe("a paste that starts inside kube-proxy's map", () => {
  it('service-ips, cut in its elements: each element a Service port, its chain not in the paste', () => {
    const { got, text } = read(SERVICE_IPS);
    assert.deepEqual(
      got.trees.services.map((t) => [t.id, t.clusterIP, t.port, t.protocol, t.endpoints.length]),
      [
        ['default/kubernetes:https', '10.96.0.1', 443, 'tcp', 0],
        ['kube-system/kube-dns:dns-tcp', '10.96.0.10', 53, 'tcp', 0],
      ],
    );
    assert.match(text, /line 1: the paste starts inside a map, .*kube-proxy's service-ips/);
    assert.match(text, /chain not in this paste: its\s+endpoints are unknown/);
    assert.doesNotMatch(text, /no endpoints|\d%/);
  });

  it('service-nodeports, told by its key and verdicts alone (no comment)', () => {
    const { got } = read(
      [
        'type inet_proto . inet_service : verdict',
        'elements = { tcp . 30080 : goto external-AAAAAAAA-default/web/tcp/http }',
      ].join('\n'),
    );
    assert.deepEqual(got.dump.mapAbove, { name: 'service-nodeports', line: 1 });
    assert.deepEqual(got.trees.services[0]?.nodePorts, [30080]);
  });

  it("a map whose verdicts are not kube-proxy's chains is not read as its", () => {
    const got = (() => {
      try {
        return readPaste(
          [
            'type ipv4_addr . inet_proto . inet_service : verdict',
            'elements = { 10.0.0.1 . tcp . 80 : goto svc_4SW47YFZTEDKD3PK }',
          ].join('\n'),
          { file: 'p.txt' },
        ).mode;
      } catch (e) {
        return (e as Error).message;
      }
    })();
    assert.match(got, /this is kube-proxy's nftables table .* cannot read as a listing here/);
  });
});
