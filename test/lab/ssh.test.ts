// kdebug's SSH transport against the lab's real sshd (addresses: test/support/lab/lab.ts): the
// rules it reads parse into the Service chains, its probes agree with real traffic, and every
// way SSH can go wrong (host key unknown, changed or revoked; auth; refused; timeout) is refused
// with a message a person can act on.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { NodeCommand, NodeResult } from '../../src/cluster/cluster.js';
import type { SshOptions } from '../../src/cluster/ssh/route.js';
import { kubeProxyChain } from '../../src/core/dataplane/kube-proxy/chain-names.js';
import { parseIptables } from '../../src/core/dataplane/iptables/read/parse.js';
import { parseProbe, parseProxyMode } from '../../src/core/nodes/outputs.js';
import { labSuite, requireLab, wsRun, type WsReply } from '../support/lab/harness.js';
import { LAB_USERS, Lab, SERVICES } from '../support/lab/lab.js';

const PREFIX = 'kdt-ssh';
const NGINX = SERVICES.find((s) => s.name === 'nginx-svc')!;
const NGINX_SVC = kubeProxyChain('KUBE-SVC', 'default/nginx-svc:http', 'tcp');
const DNS_SVC = kubeProxyChain('KUBE-SVC', 'kube-system/kube-dns:dns', 'udp');

describe('SSH to the lab nodes', labSuite(), () => {
  let lab: Lab;
  let opts: SshOptions;

  before(async () => {
    requireLab();
    lab = await Lab.up(PREFIX);
    opts = {
      identityFile: lab.files.key,
      knownHostsFiles: [lab.files.knownHosts],
      configFile: 'none',
      connectTimeoutMs: 3000,
    };
  });
  after(async () => {
    await Lab.down(PREFIX);
  });

  const run = async (destination: string, commands: NodeCommand[], options: SshOptions = opts) => {
    const reply = await wsRun(lab, { op: 'run', destination, options, commands });
    assert.ok(reply.ok, !reply.ok ? `${reply.reason}: ${reply.message}` : '');
    return reply as Extract<WsReply, { ok: true }> & { results: NodeResult[]; via: string };
  };
  const failure = async (destination: string, options: SshOptions) => {
    const reply = await wsRun(lab, {
      op: 'run',
      destination,
      options,
      commands: [{ kind: 'ip-addr' }],
    });
    assert.equal(reply.ok, false, 'connected where it must not');
    return reply as Extract<WsReply, { ok: false }>;
  };
  const hostKey = (node: string) =>
    readFileSync(`${lab.files.hostKey(node)}.pub`, 'utf8')
      .split(' ')
      .slice(0, 2)
      .join(' ');
  const fingerprintOf = (node: string) =>
    spawnSync('ssh-keygen', ['-lf', `${lab.files.hostKey(node)}.pub`], {
      encoding: 'utf8',
    }).stdout.split(' ')[1]!;

  it('a connection that drops in the middle of a command: the command is lost, not failed, and says so', async () => {
    // a connect to an address nobody on node-a's subnet has waits out its 3 s (ARP): time enough
    // to kill the sshd session that runs it, as a node that reboots or a network that drops does
    const running = wsRun(lab, {
      op: 'run',
      destination: 'root@192.0.2.11',
      options: opts,
      commands: [{ kind: 'tcp-connect', ip: '192.0.2.99', port: 80 }],
    });
    const session = await until(() => {
      for (const pid of spawnSync('ip', ['netns', 'pids', lab.ns('node-a')], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)) {
        const cmd = cmdline(pid);
        if (!/\bnc\b.*192\.0\.2\.99/.test(cmd)) continue;
        // up the tree to the sshd process of this session
        for (let p = parentOf(pid); p && p !== '1'; p = parentOf(p))
          if (/^sshd: root/.test(cmdline(p))) return p;
      }
      return undefined;
    });
    process.kill(Number(session), 'SIGKILL');
    const reply = (await running) as Extract<WsReply, { ok: true }> & { results: NodeResult[] };
    assert.ok(reply.ok);
    const [r] = reply.results;
    assert.deepEqual(
      [r!.exitCode, r!.lost, r!.error],
      [null, true, 'the connection closed before it finished'],
    );
  });

  it('a non-root login reads the rules through sudo -n, the real sudo on the node', async () => {
    const { results } = await run(`${LAB_USERS.sudoer}@192.0.2.11`, [
      { kind: 'iptables-save', backend: 'auto' },
      { kind: 'ip-addr' },
    ]);
    const [save, addr] = results;
    assert.equal(save!.exitCode, 0, save!.stderr);
    assert.ok(parseIptables(save!.stdout).table('nat')!.chain(NGINX_SVC), 'no Service chain');
    // probes need no root: they run without sudo
    assert.equal(addr!.exitCode, 0, addr!.stderr);
  });

  it('a login without sudo rights is told what to allow, not given an empty dump', async () => {
    const { results } = await run(`${LAB_USERS.other}@192.0.2.11`, [
      { kind: 'iptables-save', backend: 'auto' },
    ]);
    const [save] = results;
    assert.notEqual(save!.exitCode, 0);
    assert.equal(save!.stdout, '');
    assert.match(
      save!.error ?? '',
      /^kdlab-guest may not run \/usr\/sbin\/iptables-save with sudo -n \(.*\)\. Allow it without a password in sudoers, or connect as root\.$/,
    );
  });

  it('reads iptables-save from node-a over real sshd, and the rules hold the Service chains', async () => {
    const { results, via } = await run('root@192.0.2.11', [
      { kind: 'iptables-save', backend: 'auto' },
    ]);
    assert.equal(via, 'ssh root@192.0.2.11');
    const [save] = results;
    assert.equal(save!.exitCode, 0, save!.stderr);
    const nat = parseIptables(save!.stdout, { file: 'node-a iptables-save' }).table('nat')!;
    const svc = nat.chain(NGINX_SVC)!;
    assert.ok(svc, `no ${NGINX_SVC}`);
    assert.ok(nat.chain(DNS_SVC), `no ${DNS_SVC}`);
    const dnat = svc.rules
      .flatMap((r) => nat.chain(r.target?.name ?? '')?.rules ?? [])
      .flatMap((r) => (r.target?.kind === 'dnat' ? [r.target.to?.text] : []));
    assert.deepEqual(dnat.sort(), ['10.244.0.3:80', '10.244.1.7:80']);
  });

  it('agrees with real traffic: TCP to the ClusterIP connects, ping to it gets no answer, DNS answers', async () => {
    const probes: NodeCommand[] = [
      { kind: 'tcp-connect', ip: NGINX.clusterIP, port: NGINX.port },
      { kind: 'icmp-echo', ip: NGINX.clusterIP },
      {
        kind: 'dns-lookup',
        name: 'nginx-svc.default.svc.cluster.local',
        server: '10.96.0.10',
        type: 'A',
      },
      { kind: 'tcp-connect', ip: '192.0.2.12', port: 81 },
    ];
    const { results } = await run('root@192.0.2.11', [...probes, { kind: 'proxy-mode' }]);
    const verdicts = probes.map((p, i) => parseProbe(p.kind as 'tcp-connect', results[i]!.stdout));
    assert.deepEqual(
      verdicts.map((v) => [v.status, v.detail]),
      [
        ['pass', 'connected'],
        ['fail', 'no reply (100% packet loss)'],
        ['pass', NGINX.clusterIP],
        ['fail', 'connection refused'],
      ],
    );
    // the same questions asked directly in node-a's namespace
    assert.equal(
      lab.exec('node-a', ['curl', '-sS', '-m', '3', `http://${NGINX.clusterIP}:${NGINX.port}/`])
        .code,
      0,
    );
    assert.equal(lab.exec('node-a', ['ping', '-n', '-c', '1', '-W', '1', NGINX.clusterIP]).code, 1);
    assert.equal(parseProxyMode(results[4]!.stdout), 'iptables');
  });

  it('sees what the node sees: node-b (seed rules, no kube-dns) gets no DNS answer', async () => {
    const { results } = await run('root@192.0.2.12', [
      {
        kind: 'dns-lookup',
        name: 'nginx-svc.default.svc.cluster.local',
        server: '10.96.0.10',
        type: 'A',
      },
    ]);
    assert.deepEqual(
      parseProbe('dns-lookup', results[0]!.stdout).detail,
      'no reply from the DNS server (timed out)',
    );
  });

  it('checks a hashed known_hosts entry (node-b, hashed by ssh-keygen -H)', async () => {
    assert.match(readFileSync(lab.files.knownHosts, 'utf8').split('\n')[1]!, /^\|1\|/);
    const { results } = await run(
      '192.0.2.12',
      [{ kind: 'iptables-save', backend: 'auto', table: 'nat' }],
      { ...opts, user: 'root' },
    );
    assert.ok(parseIptables(results[0]!.stdout).table('nat')!.chain(NGINX_SVC), 'seed rules read');
  });

  it('reaches node-c (port 2222, private) only through the jump host node-a, with ~/.ssh/config', async () => {
    const direct = await failure('root@192.0.2.13:2222', opts);
    assert.equal(direct.reason, 'refused', direct.message);
    const viaConfig = {
      knownHostsFiles: [lab.files.knownHosts],
      configFile: lab.files.sshConfig,
      connectTimeoutMs: 3000,
    };
    const { via, results } = await run('node-c', [{ kind: 'ip-addr' }], viaConfig);
    assert.equal(via, 'ssh root@192.0.2.13:2222 via root@192.0.2.11');
    assert.match(results[0]!.stdout, /192\.0\.2\.13\/24/);
  });

  it('kdebug rules --ssh: finds the legacy backend on node-c and says so', async () => {
    const reply = await wsRun(lab, {
      op: 'rules',
      destination: 'node-c',
      options: { configFile: lab.files.sshConfig },
    });
    assert.ok(reply.ok, !reply.ok ? reply.message : '');
    const r = reply as Extract<WsReply, { ok: true }>;
    assert.equal(r.stem, 'iptables-legacy-save');
    assert.deepEqual(r.notes, [
      'iptables-save shows no kube-proxy chains on this host; they are in the legacy backend (iptables-legacy-save)',
    ]);
    assert.ok(parseIptables(r.text!).table('nat')!.chain(NGINX_SVC));
  });

  it('refuses an unknown host key and prints its fingerprint and the exact line to add', async () => {
    const empty = join(lab.dir, 'known_hosts.empty');
    writeFileSync(empty, '');
    const r = await failure('root@192.0.2.11', { ...opts, knownHostsFiles: [empty] });
    assert.equal(r.reason, 'host-key-unknown');
    assert.ok(r.message.includes(fingerprintOf('node-a')), r.message);
    assert.ok(r.message.includes(`\n    192.0.2.11 ${hostKey('node-a')}`), r.message);
  });

  it('refuses a changed host key and names the old entry', async () => {
    const wrong = join(lab.dir, 'known_hosts.changed');
    writeFileSync(wrong, `192.0.2.11 ${hostKey('node-b')}\n`);
    const r = await failure('root@192.0.2.11', { ...opts, knownHostsFiles: [wrong] });
    assert.equal(r.reason, 'host-key-changed');
    assert.ok(r.message.includes('HOST KEY CHANGED'), r.message);
    assert.ok(r.message.includes(`${wrong}:1 (${fingerprintOf('node-b')})`), r.message);
    assert.ok(r.message.includes(fingerprintOf('node-a')), r.message);
  });

  it('refuses a @revoked host key even when it is also listed as known', async () => {
    const revoked = join(lab.dir, 'known_hosts.revoked');
    writeFileSync(revoked, `192.0.2.11 ${hostKey('node-a')}\n@revoked * ${hostKey('node-a')}\n`);
    const r = await failure('root@192.0.2.11', { ...opts, knownHostsFiles: [revoked] });
    assert.equal(r.reason, 'host-key-revoked', r.message);
  });

  it('says authentication failed for a key the node does not accept', async () => {
    const stranger = join(lab.dir, 'stranger');
    spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    const r = await failure('root@192.0.2.11', { ...opts, identityFile: stranger });
    assert.equal(r.reason, 'auth');
    assert.match(r.message, /^root@192\.0\.2\.11: authentication failed \(offered .*stranger\)/);
  });

  it('logs in with a key held by ssh-agent', async () => {
    const socket = join(lab.dir, 'agent.sock');
    const agent = spawnSync('ssh-agent', ['-a', socket, '-s'], { encoding: 'utf8' });
    const pid = Number(/SSH_AGENT_PID=(\d+)/.exec(agent.stdout)?.[1]);
    try {
      assert.equal(
        spawnSync('ssh-add', ['-q', lab.files.key], {
          env: { ...process.env, SSH_AUTH_SOCK: socket },
        }).status,
        0,
      );
      const { results } = await run('root@192.0.2.11', [{ kind: 'ip-addr' }], {
        knownHostsFiles: [lab.files.knownHosts],
        configFile: 'none',
        agentSocket: socket,
        home: lab.dir,
      });
      assert.equal(results[0]!.exitCode, 0);
    } finally {
      if (pid) process.kill(pid);
    }
  });

  it('gives up on a host that never answers after the connect timeout', async () => {
    // 203.0.113.5 is routed to the lab switch, which forwards nothing: the SYN just vanishes
    const r = await failure('root@203.0.113.5', { ...opts, connectTimeoutMs: 1000 });
    assert.equal(r.reason, 'timeout', r.message);
    assert.match(r.message, /^203\.0\.113\.5:22: no SSH answer within 1s/);
  });

  it('stops waiting for a command after the command timeout', async () => {
    const { results } = await run(
      'root@192.0.2.11',
      [{ kind: 'tcp-connect', ip: '203.0.113.5', port: 80 }],
      { ...opts, commandTimeoutMs: 500 },
    );
    assert.deepEqual(
      [results[0]!.exitCode, results[0]!.error],
      [null, 'no result within 0.5s; kdebug stopped waiting'],
    );
  });

  it('reads nodes in parallel by their InternalIP; an unreachable node does not stop the others', async () => {
    const node = (name: string, ip: string) => ({
      name,
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: name },
      ],
    });
    const reply = await wsRun(lab, {
      op: 'nodes',
      nodes: [
        node('node-a', '192.0.2.11'),
        node('node-c', '192.0.2.13'),
        node('node-b', '192.0.2.12'),
      ],
      options: { ...opts, user: 'root' },
      command: { kind: 'iptables-save', backend: 'auto', table: 'nat' },
    });
    assert.ok(reply.ok);
    const results = (reply as Extract<WsReply, { ok: true }>).results!;
    assert.deepEqual(
      results.map((r) => [r.via, r.exitCode, r.error?.split(':')[0] ?? '']),
      [
        ['ssh root@192.0.2.11', 0, ''],
        ['ssh 192.0.2.13', null, '192.0.2.13'],
        ['ssh root@192.0.2.12', 0, ''],
      ],
    );
    assert.match(results[1]!.error!, /connection refused/);
  });
});

const cmdline = (pid: string) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
};

const parentOf = (pid: string) => {
  try {
    return /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
};

/** Polls until `f` gives a value (5 s at most). */
async function until<T>(f: () => T | undefined): Promise<T> {
  for (const end = Date.now() + 5000; Date.now() < end;) {
    const v = f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('timed out');
}
