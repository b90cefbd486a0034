// ipvsadm's counter views (--rate, --stats) print no forwarding method: a real server there is not
// said to be DNATed (the same host's -Ln shows direct routing), in text or JSON.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

const DIR = 'test/fixtures/ipvs-views';
const forwards = (file: string) => {
  const r = kdebug(['rules', '--file', `${DIR}/${file}`, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { services: { endpoints: { forward?: string }[] }[] };
  return doc.services.flatMap((s) => s.endpoints.map((e) => e.forward ?? 'masq'));
};

describe('the forwarding method of an IPVS real server', () => {
  it('-Ln with Route: direct routing, no DNAT', () => {
    const f = forwards('reibang-lvs-dr.txt');
    assert.ok(f.length > 0);
    assert.ok(f.every((x) => x === 'route'));
  });

  it('--rate: not known, and the text does not say DNAT', () => {
    const f = forwards('reibang-lvs-rate.txt');
    assert.deepEqual(f, ['unknown', 'unknown', 'unknown']);
    const text = kdebug(['rules', '--file', `${DIR}/reibang-lvs-rate.txt`, '-o', 'text']).stdout;
    assert.doesNotMatch(text, /DNAT/);
    assert.match(text, /-> 10\.100\.5\.86:6030 \(forwarding method not in/);
  });
});
