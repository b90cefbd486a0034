// IPVS mode live: the oldest and newest modelled kube-proxy (1.30, 1.37) run in IPVS mode in the
// IPVS VM (a real kernel, test/support/ipvs-vm) as node-a beside the lab with the truth matrix, and
// `kdebug expect` equals what each programmed there (virtual and real servers, ipsets with their
// create options, kube-ipvs0, both proxiers' iptables rules) and drift finds nothing. Every
// release in between, from its recording (test/versions).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import { Analysis } from '../../src/core/nodes/analysis.js';
import { goUnavailable, K8S_VERSION } from '../support/cluster/build.js';
import { ClusterClient } from '../support/cluster/client.js';
import { clusterUnavailable, down, up } from '../support/cluster/cluster.js';
import { applyMatrix } from '../support/cluster/matrix.js';
import { IPVS_NODE, ipvsVmUnavailable, recordIpvsNode } from '../support/ipvs-vm/kube-proxy.js';
import { ipvsDifferences } from '../support/ipvs-vm/truth.js';
import { skipWithout } from '../support/skip.js';
import { LATEST_PATCH } from '../versions/record.js';
import { allModes } from '../support/modes.js';

const PREFIX = 'kdi';
const why = goUnavailable() ?? clusterUnavailable() ?? ipvsVmUnavailable();

for (const minor of [30, 37])
  describe(
    `kube-proxy ${LATEST_PATCH[minor]} in IPVS mode, live in the IPVS VM`,
    skipWithout(why),
    () => {
      let c: ClusterClient;
      const tmp = mkdtempSync(join(tmpdir(), `${PREFIX}-ipvs-`));
      const snapshot = join(tmp, 'snapshot');
      before(async () => {
        const version = LATEST_PATCH[minor]!;
        c = new ClusterClient(
          await up({
            prefix: PREFIX,
            nodes: 2,
            kubeProxy: version === K8S_VERSION ? undefined : version,
          }),
        );
        await applyMatrix(c);
      });
      after(() => {
        down();
        rmSync(tmp, { recursive: true, force: true });
      });

      it('kdebug expect equals what it programmed on the node; drift finds nothing', async () => {
        const seconds = recordIpvsNode(c, PREFIX, { snapshot, vm: join(tmp, 'vm') });
        console.error(`the IPVS VM ran kube-proxy ${LATEST_PATCH[minor]} in ${seconds} s`);
        const analysis = new Analysis(await readSnapshot(snapshot), { code: allModes });
        assert.equal(analysis.state(IPVS_NODE).mode.value, 'ipvs');
        assert.equal(analysis.state(IPVS_NODE).version?.value.minor, minor);
        assert.deepEqual(ipvsDifferences(analysis, IPVS_NODE), []);
        const drift = c.kdebug([
          'drift',
          '--snapshot',
          snapshot,
          '--node',
          IPVS_NODE,
          '-o',
          'json',
        ]);
        assert.equal(drift.code, 0, drift.stdout + drift.stderr);
      });
    },
  );
