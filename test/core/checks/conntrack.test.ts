// conntrack at step 8, from recorded `conntrack -L` and `conntrack -S` outputs: the DNS case (a
// UDP entry to kube-dns still answered by a CoreDNS Pod that moved away) is found with the entries
// and the command that clears them; current entries pass; a node whose conntrack could not run
// is not observed; insert_failed is said since boot. The lines are the real conntrack 1.4.7's.
// IP conventions: builders.ts (kube-dns 10.96.0.10, CoreDNS 10.244.0.2 on node-a).
import { evidenceText } from '../../../src/core/findings/evidence.js';
import {
  resolveNext,
  shellLine,
  type NextCommand,
} from '../../../src/core/findings/next-command.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConntrack, parseConntrackStats } from '../../../src/core/facts/conntrack.js';
import { conntrackFirst, conntrackPlan } from '../../../src/core/diagnose.js';
import { reachabilityCheck } from '../../../src/core/checks/reachability/reachability.js';
import { facts, kubeDns, run, twoNodes } from './builders.js';
import { allModes } from '../../support/modes.js';

/** A next command as the person's terminal shows it. */
const line = (c: NextCommand | undefined) => c && shellLine(resolveNext(c));

const DNS = { namespace: 'kube-system', service: 'kube-dns' };
const objects = [...kubeDns(), ...twoNodes()];
const udp = (client: string, sport: number, server: string) =>
  `udp      17 119 src=${client} dst=10.96.0.10 sport=${sport} dport=53 src=${server} dst=${client} sport=53 dport=${sport} mark=0 use=1`;
/** conntrack -S of a two-CPU node with these insert_failed counts. */
const stats = (...failed: number[]) =>
  failed
    .map(
      (n, cpu) =>
        `cpu=${cpu}   \tfound=0 invalid=0 insert=2 insert_failed=${n} drop=0 early_drop=0 error=0 search_restart=0 clash_resolve=0 chaintoolong=0 \n`,
    )
    .join('');

const conntrack = (nodes: Record<string, Record<string, string>>, meta = {}) =>
  run(
    reachabilityCheck,
    { ...facts(objects, nodes), meta: { context: 'test', ...meta } },
    {},
    DNS,
  ).filter((f) => f.id.startsWith('conntrack'));

describe('conntrack output', () => {
  it('reads the entries of conntrack -L, UDP and TCP, and leaves its summary out', () => {
    const { entries } = parseConntrack(
      `${udp('10.244.1.5', 40000, '10.244.9.9')}\ntcp      6 119 ESTABLISHED src=10.244.1.5 dst=10.96.0.10 sport=40001 dport=53 src=10.244.0.2 dst=10.244.1.5 sport=53 dport=40001 [ASSURED] mark=0 use=1\nconntrack v1.4.7 (conntrack-tools): 2 flow entries have been shown.\n`,
    );
    assert.deepEqual(
      entries.map((e) => [e.protocol, e.state, e.orig.dst, e.orig.dport, e.reply.src]),
      [
        ['udp', undefined, '10.96.0.10', 53, '10.244.9.9'],
        ['tcp', 'ESTABLISHED', '10.96.0.10', 53, '10.244.0.2'],
      ],
    );
  });

  it('reads no endpoint from a line whose address is no IP address, and says the line', () => {
    const { entries, unread } = parseConntrack(
      `tcp      6 86398 ESTABLISHED src=10.244.0.3 dst=10.1.190.219 sport=40000 dport=8080 src=10.244.9.9;$(touch\${IFS}/tmp/x) dst=10.244.0.3 sport=80 dport=40000 [ASSURED] mark=0 use=1\n${udp('10.244.1.5', 40000, '10.244.9.9')}\n`,
    );
    assert.deepEqual(
      entries.map((e) => e.reply.src),
      ['10.244.9.9'],
    );
    assert.equal(unread.length, 1);
    assert.match(unread[0]!, /^tcp /);
  });

  it('sums the counters of every CPU', () => {
    assert.deepEqual(parseConntrackStats(stats(7, 0)), {
      insertFailed: 7,
      drop: 0,
      cpus: 2,
    });
    assert.equal(parseConntrackStats('conntrack: not found'), undefined);
  });

  it("is read per cluster IP and protocol of the Service's ports, with the counters before and after the probes", () => {
    const plan = conntrackPlan(facts(objects), DNS, { code: allModes });
    assert.deepEqual(plan, [
      { kind: 'conntrack-list', protocol: 'udp', dst: '10.96.0.10' },
      { kind: 'conntrack-stats', again: true },
    ]);
    assert.deepEqual(conntrackFirst(plan), [{ kind: 'conntrack-stats' }]);
    assert.deepEqual(conntrackFirst([]), []);
  });
});

describe('conntrack at Reachability', () => {
  it('a UDP entry still answered by a gone CoreDNS: failed, with the entries and how to clear them', () => {
    const found = conntrack({
      'node-b': {
        'conntrack_udp_10.96.0.10': [
          udp('10.244.1.5', 40000, '10.244.9.9'),
          udp('10.244.1.6', 40002, '10.244.9.9'),
          udp('10.244.1.7', 40003, '10.244.0.2'),
        ].join('\n'),
        'conntrack-stats': stats(0, 0),
      },
    });
    assert.deepEqual(
      found.map((f) => `${f.id}:${f.status} ${f.title}`),
      [
        'conntrack-stale-entries:fail node-b: 2 UDP conntrack entries to 10.96.0.10:53 still go to 10.244.9.9, no longer an endpoint',
      ],
    );
    assert.equal(found[0]!.evidence.length, 2);
    assert.match(
      found[0]!.evidence.map(evidenceText)[0]!,
      /^nodes\/node-b\/conntrack_udp_10\.96\.0\.10\.txt: udp +17 119 src=10\.244\.1\.5 /,
    );
    assert.equal(
      line(found[0]!.next),
      'kubectl debug node/node-b -it --image=nicolaka/netshoot:v0.13 --profile=sysadmin -- conntrack -D -p udp --orig-dst 10.96.0.10 --reply-src 10.244.9.9',
    );
  });

  it('entries to current endpoints only: passed, counted', () => {
    const found = conntrack({
      'node-a': { 'conntrack_udp_10.96.0.10': udp('10.244.1.7', 40003, '10.244.0.2') },
      'node-b': { 'conntrack_udp_10.96.0.10': '' },
    });
    assert.deepEqual(
      found.map((f) => `${f.id}:${f.status} ${f.title}`),
      [
        'conntrack-entries-current:pass conntrack: 1 tracked connection to the Service, each to a current endpoint',
      ],
    );
  });

  it('conntrack missing on a node: not observed, with why', () => {
    const found = conntrack(
      { 'node-a': {} },
      {
        nodeErrors: [
          {
            node: 'node-a',
            command: 'conntrack_udp_10.96.0.10',
            exitCode: 127,
            error:
              'timeout: failed to run command ‘/usr/sbin/conntrack’: No such file or directory',
          },
        ],
      },
    );
    assert.deepEqual(
      found.map((f) => `${f.id}:${f.status}`),
      ['conntrack-not-observed:skip'],
    );
    assert.match(found[0]!.explanation, /No such file or directory/);
  });

  it('insert_failed growing between the reads before and after the probes: the race, now', () => {
    const found = conntrack({
      'node-a': {
        'conntrack_udp_10.96.0.10': '',
        'conntrack-stats': stats(41, 1),
        'conntrack-stats-again': stats(43, 2),
      },
      'node-b': {
        'conntrack_udp_10.96.0.10': '',
        'conntrack-stats': stats(5, 0),
        'conntrack-stats-again': stats(5, 0),
      },
    });
    const f = found.find((x) => x.id === 'conntrack-insert-failed')!;
    assert.equal(f.status, 'warn');
    assert.equal(f.title, 'conntrack insert_failed grew on node-a (+3) while kdebug probed');
    assert.deepEqual(
      f.evidence.map(evidenceText).map((e) => e.split(':')[0]),
      ['nodes/node-a/conntrack-stats.txt', 'nodes/node-a/conntrack-stats-again.txt'],
    );
  });

  it('insert_failed above zero and not growing while kdebug probed: an old race, said, not a problem', () => {
    const found = conntrack({
      'node-a': {
        'conntrack_udp_10.96.0.10': '',
        'conntrack-stats': stats(41, 1),
        'conntrack-stats-again': stats(41, 1),
      },
    });
    const f = found.find((x) => x.id === 'conntrack-insert-failed')!;
    assert.equal(f.status, 'pass');
    assert.equal(
      f.title,
      'conntrack insert_failed on node-a (42), not growing while kdebug probed',
    );
  });

  it('insert_failed above zero: said as a count since boot, to be read again', () => {
    const found = conntrack({
      'node-a': {
        'conntrack_udp_10.96.0.10': '',
        'conntrack-stats': stats(41, 1),
      },
    });
    const f = found.find((x) => x.id === 'conntrack-insert-failed')!;
    assert.equal(f.status, 'warn');
    assert.equal(f.title, 'conntrack insert_failed on node-a (42)');
    assert.match(f.explanation, /since boot/);
  });

  it('not run on that transport (the kube-proxy image): nothing said, the access line says why', () => {
    const found = conntrack(
      { 'node-a': {} },
      {
        nodeErrors: [
          {
            node: 'node-a',
            command: 'conntrack_udp_10.96.0.10',
            exitCode: null,
            error: 'conntrack-list cannot run in the kube-proxy-pod: its image has no tools for it',
          },
        ],
      },
    );
    assert.deepEqual(found, []);
  });

  it('nothing recorded (an older snapshot): nothing said', () => {
    assert.deepEqual(conntrack({ 'node-a': {} }), []);
  });
});
