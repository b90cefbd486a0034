import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commandStem } from '../../../src/cluster/cluster.js';
import { probeStem, type Probe } from '../../../src/core/checks/probe-stems.js';

describe('probe stems', () => {
  // core may not import cluster/: this keeps its copy of the file names in step with commandStem
  const probes: Probe[] = [
    { kind: 'tcp-connect', ip: '10.96.0.50', port: 80 },
    { kind: 'udp-probe', ip: '10.96.0.10', port: 53 },
    { kind: 'icmp-echo', ip: '10.96.0.50' },
    { kind: 'dns-lookup', name: 'web.default.svc.cluster.local', server: '10.96.0.10', type: 'A' },
  ];
  for (const p of probes) it(p.kind, () => assert.equal(probeStem(p), commandStem(p)));
});
