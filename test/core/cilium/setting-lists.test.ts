// The agent's settings whose source an output names are one list (agent/provenance.ts), in the
// order outputs state them, each marked where its status may print it: the status's own settings
// are read from that list, not from a second one that repeats it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  SETTING_NAMES,
  SOURCED_SETTINGS,
  STATUS_SETTINGS,
  settingsStated,
} from '../../../src/core/dataplane/cilium/agent/provenance.js';
import { fromStatus } from '../../../src/core/dataplane/cilium/agent/status.js';
import { Analysis } from '../../../src/core/nodes/analysis.js';
import { ciliumCluster, facts } from '../checks/builders.js';
import { allModes } from '../../support/modes.js';

/** `cilium-dbg status --verbose` printing every field a setting is read from (1.16 on). */
const STATUS = [
  'KubeProxyReplacement:   True   [eth0   192.168.1.10 (Direct Routing)]',
  'Cilium:                 Ok   1.20.2 (v1.20.2-0a1b2c3d)',
  'KubeProxyReplacement Details:',
  '  Status:                True',
  '  Socket LB:             Enabled',
  '  Socket LB Coverage:    Full',
  '  Mode:                  SNAT',
  '  Backend Selection:     Random',
  '  Session Affinity:      Enabled',
  '  Services:',
  '  - NodePort:       Enabled (Range: 30000-32767) ',
  '',
].join('\n');

describe("the agent's sourced settings: one list", () => {
  it("the status's settings are the list's own, in its order", () => {
    assert.deepEqual(
      STATUS_SETTINGS,
      SOURCED_SETTINGS.filter((s) => (STATUS_SETTINGS as readonly string[]).includes(s)),
    );
    // a status printing every field gives each of them, and nothing else
    const fields = fromStatus(STATUS).fields;
    assert.deepEqual(Object.keys(fields).sort(), [...STATUS_SETTINGS].sort());
  });

  it('outputs state them in the order of the list: the status first, noBackend before the range', () => {
    assert.deepEqual(SOURCED_SETTINGS.slice(0, 8), [
      'kubeProxyReplacement',
      'socketLB',
      'hostnsOnly',
      'algorithm',
      'forwarding',
      'sessionAffinity',
      'noBackend',
      'nodePortRange',
    ]);
    const agent = new Analysis(facts(ciliumCluster()), { code: allModes }).state('node-b').cilium!;
    assert.deepEqual(
      settingsStated(agent).map((s) => s.setting),
      SOURCED_SETTINGS.map((s) => SETTING_NAMES[s]),
    );
    assert.equal(SETTING_NAMES.noBackend, 'service-no-backend-response');
  });
});
