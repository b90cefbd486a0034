// The built `kdebug drift`, `trace` and `expect` on the Cilium scenario (snapshots/cilium-stale-
// backend) made into one whose agents are not ready, answered no status, and run a release that
// refuses cilium-config as read (both acceleration keys set, to different values).
// vm-12-7-centos listed nothing of its agent: it has not started. vm-12-11-centos's listings were
// read: its agent ran, on an earlier configuration.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { kdebug } from '../support/cli.js';

interface Item {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  status?: { containerStatuses?: Record<string, unknown>[]; conditions?: unknown[] };
}

const dir = mkdtempSync(join(tmpdir(), 'kdebug-cilium-refused-'));
cpSync('snapshots/cilium-stale-backend', dir, { recursive: true });
const objects = JSON.parse(readFileSync(join(dir, 'objects.json'), 'utf8')) as { items: Item[] };
for (const o of objects.items) {
  if (o.kind === 'Pod' && o.metadata.name.startsWith('cilium-'))
    o.status!.containerStatuses = [
      {
        name: 'cilium-agent',
        ready: false,
        restartCount: 5,
        state: { waiting: { reason: 'CrashLoopBackOff' } },
      },
    ];
  if (o.kind === 'ConfigMap' && o.metadata.name === 'cilium-config')
    o.data = { ...o.data, 'bpf-lb-acceleration': 'native', 'node-port-acceleration': 'disabled' };
}
writeFileSync(join(dir, 'objects.json'), JSON.stringify(objects));
for (const node of ['vm-12-7-centos', 'vm-12-11-centos'])
  rmSync(join(dir, `nodes/${node}/cilium-status.txt`));
for (const stem of ['frontends', 'backends', 'bpf-lb-list'])
  rmSync(join(dir, `nodes/vm-12-7-centos/cilium-${stem}.txt`));
after(() => rmSync(dir, { recursive: true, force: true }));

const NOT_STARTED =
  /^kdebug: node vm-12-7-centos: Cilium's agent kube-system\/cilium-5xq2d does not start with its configuration, so it programs no Service there \(.*\): cilium-config sets both bpf-lb-acceleration and node-port-acceleration/;

describe('a Cilium agent that does not start with its configuration, on the command line', () => {
  it('drift and trace on its node say so and why, and compare and walk nothing', () => {
    // before: "no rules recorded for node "vm-12-7-centos" (recorded: vm-12-11-centos)"
    const drift = kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-7-centos']);
    assert.equal(drift.code, 2, drift.stderr);
    assert.match(drift.stderr, NOT_STARTED);
    const trace = kdebug([
      'trace',
      '--snapshot',
      dir,
      '--node',
      'vm-12-7-centos',
      '--src',
      '10.244.0.3',
      '--dst',
      '10.1.190.219:8080',
    ]);
    assert.equal(trace.code, 2, trace.stderr);
    assert.match(trace.stderr, NOT_STARTED);
    assert.equal(trace.stdout, '');
    // expect holds nothing for it, as before
    const expect = kdebug(['expect', '--snapshot', dir, '--node', 'vm-12-7-centos']);
    assert.match(expect.stdout, /^# nothing: cilium-config sets both bpf-lb-acceleration/m);
  });

  it('drift without --node says the node it leaves out and why', () => {
    const said =
      /^kdebug: 1 node not compared: vm-12-7-centos \(Cilium's agent kube-system\/cilium-5xq2d does not start with its configuration, .*cilium-config sets both bpf-lb-acceleration/m;
    // before: the node was left out with nothing said
    for (const flags of [['--all-nodes'], []]) {
      const drift = kdebug(['drift', '--snapshot', dir, ...flags, '-o', 'json']);
      assert.equal(drift.code, 1, drift.stderr);
      assert.match(drift.stderr, said);
      const doc = JSON.parse(drift.stdout) as { nodes: { node: string }[] };
      assert.deepEqual(
        doc.nodes.map((n) => n.node),
        ['vm-12-11-centos'],
      );
    }
  });

  it('its listing read, drift compares it as usual and notes it would not start again', () => {
    const drift = kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-11-centos', '-o', 'json']);
    assert.equal(drift.code, 1, drift.stderr);
    const doc = JSON.parse(drift.stdout) as {
      findings: { id: string; severity: string }[];
      notes: { id: string; message: string }[];
    };
    // the scenario's own fault, found as without the refusal
    assert.deepEqual(
      doc.findings.filter((f) => f.severity !== 'info').map((f) => f.id),
      ['cilium-backend-stale', 'cilium-backend-missing'],
    );
    // and its BPF maps' forwarding and algorithm not compared with the refused config
    assert.deepEqual(
      doc.notes.map((n) => n.id),
      ['cilium-config-refused', 'table-not-captured'],
    );
    assert.match(doc.notes[0]!.message, /cilium-lk8wz is not ready and would not start again/);
    const text = kdebug(['drift', '--snapshot', dir, '--node', 'vm-12-11-centos']);
    // before: "compared with what Cilium's agent should hold (nothing: it does not start, below)"
    assert.match(text.stdout, /compared with\s+what Cilium's agent should hold \(frontends/);
  });

  it('its listing read, expect prints the table drift compares, with a note why it may differ', () => {
    const expect = kdebug(['expect', '--snapshot', dir, '--node', 'vm-12-11-centos'], {
      env: { COLUMNS: '400' },
    });
    assert.equal(expect.code, 0, expect.stderr);
    // before: "# nothing: cilium-config sets both ...", while drift compared the full table
    assert.doesNotMatch(expect.stdout, /^# nothing/m);
    assert.match(
      expect.stdout,
      /^# note: cilium-config as read would be refused at the agent's next start, so what it holds comes from an earlier configuration: cilium-config sets both bpf-lb-acceleration/m,
    );
    assert.match(expect.stdout, /^10\.1\.190\.219:8080\/TCP +ClusterIP +default\/nginx-svc/m);
    // the BPF flags the refused config's options decide, left out and said (before: each
    // ClusterIP's "non-routable", as the refused config has bpf-lb-external-clusterip)
    assert.match(
      expect.stdout,
      /^10\.1\.190\.219:8080\/TCP \(0\) +0\.0\.0\.0:0 \(\d+\) \(0\) \[ClusterIP\]$/m,
    );
    assert.match(
      expect.stdout,
      /^# left out of the rows below, whether an entry carries them not known: .*: non-routable \(bpf-lb-external-clusterip\), dsr \(bpf-lb-mode\)$/m,
    );
  });

  it('a NodePort its listing lacks: kube-proxy replacement not known, not compared, never missing', () => {
    const nodePort = mkdtempSync(join(tmpdir(), 'kdebug-cilium-nodeport-'));
    after(() => rmSync(nodePort, { recursive: true, force: true }));
    cpSync(dir, nodePort, { recursive: true });
    const made = JSON.parse(readFileSync(join(dir, 'objects.json'), 'utf8')) as {
      items: { kind: string; metadata: { name: string }; spec?: Record<string, unknown> }[];
    };
    const svc = made.items.find((o) => o.kind === 'Service' && o.metadata.name === 'nginx-svc')!;
    svc.spec = {
      ...svc.spec,
      type: 'NodePort',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP', targetPort: 80, nodePort: 30080 }],
    };
    writeFileSync(join(nodePort, 'objects.json'), JSON.stringify(made));
    const args = ['--snapshot', nodePort, '--node', 'vm-12-11-centos'];
    const drift = kdebug(['drift', ...args, '-o', 'json']);
    const doc = JSON.parse(drift.stdout) as {
      findings: { id: string; title: string }[];
      notes: { id: string; title: string; message: string }[];
    };
    // before: "no frontend 0.0.0.0:30080/TCP NodePort", from the refused kube-proxy-replacement
    assert.deepEqual(
      doc.findings.filter((f) => f.title.includes('30080')),
      [],
    );
    assert.match(
      doc.notes.map((n) => n.message).join('\n'),
      /lists none of 0\.0\.0\.0:30080\/TCP: it makes them only with kube-proxy replacement, which is not known/,
    );
    const expect = kdebug(['expect', ...args], { env: { COLUMNS: '400' } });
    assert.doesNotMatch(expect.stdout, /^0\.0\.0\.0:30080/m);
    assert.match(
      expect.stdout,
      /^# note: kube-proxy replacement not known: .* so they are not in the tables below: 0\.0\.0\.0:30080\/TCP NodePort default\/nginx-svc -> 10\.244\.0\.3:80\/TCP, 10\.244\.1\.8:80\/TCP$/m,
    );
  });

  it('its readiness not read and nothing of it listed, expect does not say whether it runs', () => {
    const unknown = mkdtempSync(join(tmpdir(), 'kdebug-cilium-unknown-'));
    after(() => rmSync(unknown, { recursive: true, force: true }));
    cpSync(dir, unknown, { recursive: true });
    for (const o of objects.items)
      if (o.kind === 'Pod' && o.metadata.name.startsWith('cilium-')) {
        delete o.status!.containerStatuses;
        delete o.status!.conditions;
      }
    writeFileSync(join(unknown, 'objects.json'), JSON.stringify(objects));
    const expect = kdebug(['expect', '--snapshot', unknown, '--node', 'vm-12-7-centos'], {
      env: { COLUMNS: '400' },
    });
    assert.equal(expect.code, 0, expect.stderr);
    // before: "so what it holds comes from an earlier configuration", as if it were known to run
    assert.match(expect.stdout, /^# note: .*whether it started is not known/m);
    assert.doesNotMatch(expect.stdout, /comes from an earlier configuration/);
  });
});
