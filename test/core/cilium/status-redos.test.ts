// The agent's status is read line by line: a hostile `cilium-status.txt` (a snapshot's, a
// paste's) of blank lines or of a line of spaces reads in linear time, and the real statuses
// read as before.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { statusDevices } from '../../../src/core/dataplane/cilium/agent/devices.js';
import { fromStatus } from '../../../src/core/dataplane/cilium/agent/status.js';
import { ciliumForm, ciliumOther } from '../../../src/core/dataplane/cilium/read/which-listing.js';

const MB = 1 << 20;
const spaces = ' '.repeat(MB);
const HOSTILE: Record<string, string> = {
  newlines: '\n'.repeat(MB),
  'CRLF lines': '\r\n'.repeat(MB / 2),
  'indented blank lines': ' \n'.repeat(MB / 2),
  'KubeProxyReplacement: a, spaces, b': `KubeProxyReplacement: a${spaces}b`,
  'Mode: a, spaces, b': `  Mode: a${spaces}b`,
  'Devices: a, spaces, b': `  Devices: a${spaces}b`,
  'a dash and spaces before NodePort': `-${spaces}NodePort:${spaces}x`,
  'Cilium: spaces': `Cilium:${spaces}Ok${spaces}`,
  'KubeProxyReplacement Details lines': 'KubeProxyReplacement Details:\n'.repeat(MB / 30),
  'a line of tabs': '\t'.repeat(MB),
};

// CPU time: a loaded machine's other work does not count, a quadratic read of 1 MB still does
const within = (what: string, f: () => unknown) => {
  const before = process.cpuUsage();
  f();
  const used = process.cpuUsage(before);
  const ms = (used.user + used.system) / 1000;
  assert.ok(ms < 2000, `${what}: ${Math.round(ms)} ms of CPU`);
};

describe('the agent status, hostile', () => {
  for (const [what, text] of Object.entries(HOSTILE))
    it(`${what} (1 MB) reads in linear time`, () => {
      within('fromStatus', () => fromStatus(text));
      within('statusDevices', () => statusDevices(text));
      within('ciliumForm', () => ciliumForm(text));
      within('ciliumOther', () => ciliumOther(text));
    });

  it('still reads a field past a hostile run', () => {
    const s = fromStatus(`${'\n'.repeat(MB)}KubeProxyReplacement:   True   [eth0 10.0.0.5]\n`);
    assert.equal(s.kubeProxyReplacement, true);
    assert.equal(fromStatus(`KubeProxyReplacement: a${spaces}b`).kubeProxyReplacement, false);
  });
});

describe('the agent status, real', () => {
  const DIR = 'test/fixtures/cilium/status';
  const readings = JSON.parse(readFileSync(`${DIR}/readings.json`, 'utf8')) as Record<
    string,
    { version?: string; devices?: { name: string; addresses: string[] }[] }
  >;
  for (const file of readdirSync(DIR).filter((f) => f.endsWith('.txt')))
    it(file, () => {
      const text = readFileSync(`${DIR}/${file}`, 'utf8');
      const reading = readings[file.replace(/\.txt$/, '')]!;
      const devices = statusDevices(text);
      if (reading.devices)
        assert.deepEqual(
          devices?.map((d) => [d.name, d.addresses]),
          reading.devices.map((d) => [d.name, d.addresses]),
        );
      assert.notEqual(fromStatus(text).kubeProxyReplacement, undefined);
    });
});
