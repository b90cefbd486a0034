// One Service's IPVS state as read by address (kdebug svc): each of its virtual servers as
// `ipvsadm -Ln -t|-u|--sctp-service IP:PORT` lists it, and each of its ipset entries as `ipset test
// SET ENTRY` answers. The words are ipvsadm's and ipset's own, as a real kernel printed them
// (test/fixtures/ipvs-live: "No such service", "X is in set Y.", "X is NOT in set Y.").
import { canonicalAddress } from '../../../ipv6.js';
import { commandStem, IPVS_SERVICE_STEM, type NodeCommand } from '../../../nodes/commands.js';
import type { NodeOutputs } from '../../../model.js';
import type { DumpReadFailure } from '../../dataplane.js';
import type { IpvsRead } from '../dataplane.js';
import type { ExpectedIpvs, ExpectedVirtualServer } from '../expected/expected.js';
import { hostAndPort } from './addresses.js';
import type { Ipset } from './ipset.js';
import { IpvsParseError, parseIpvs, type IpvsService, type IpvsTable } from './listing.js';

/** ipvsadm's words (stderr, exit 1) for a virtual server that is not there. */
export const NO_SUCH_SERVICE = /^No such service$/m;

/** ipset test's answers, on stderr: held (exit 0, as a warning), not held (exit 1), no such set
 * (exit 1). */
const HELD = /^(?:Warning: )?\S+ is in set (\S+)\.$/m;
const NOT_HELD = /^\S+ is NOT in set (\S+)\.$/m;
const NO_SET = /The set with the given name does not exist/;

export type IpsetAnswer = 'held' | 'not-held' | 'no-set';

/** What one `ipset test` of `set` answered, from its words; undefined where they are none of its
 * answers, or name another set. */
export function ipsetAnswer(text: string, set: string): IpsetAnswer | undefined {
  const answer = (m: RegExpExecArray | null) => m !== null && m[1] === set;
  if (answer(NOT_HELD.exec(text))) return 'not-held';
  if (answer(HELD.exec(text))) return 'held';
  return NO_SET.test(text) ? 'no-set' : undefined;
}

/** The read of one virtual server, by its address. */
export const virtualServerRead = (
  v: Pick<ExpectedVirtualServer, 'protocol' | 'ip' | 'port'>,
): Extract<NodeCommand, { kind: 'ipvs-service' }> => ({
  kind: 'ipvs-service',
  protocol: v.protocol,
  ip: v.ip,
  port: v.port,
});

/** The test of one ipset entry. */
export const ipsetTest = (
  set: string,
  entry: string,
): Extract<NodeCommand, { kind: 'ipset-test' }> => ({
  kind: 'ipset-test',
  set,
  entry,
});

/** A virtual server and a test as drift keys them: "tcp 10.96.0.30:80", "KUBE-CLUSTER-IP ENTRY". */
export const serverKey = (v: Pick<IpvsService, 'protocol' | 'address'>) =>
  `${v.protocol} ${v.address}`;
export const entryKey = (set: string, entry: string) => `${set} ${entry}`;

/** One read by address parsed: its listing, or why it does not read. */
export function listingAt(text: string, file: string): IpvsTable | IpvsParseError {
  try {
    return parseIpvs(text, file, { recorded: true });
  } catch (e) {
    if (!(e instanceof IpvsParseError)) throw e;
    return e;
  }
}

/**
 * What `ipvsadm -Ln` of one address printed, for the virtual server asked: none where it printed
 * nothing (ipvsadm's "No such service", recorded so), its one virtual server, or why the listing
 * cannot stand for it (then the whole listing is read instead). `listing`: its parse, where one
 * is kept.
 */
export function virtualServerAt(
  text: string,
  asked: Pick<ExpectedVirtualServer, 'protocol' | 'ip' | 'port'>,
  file: string,
  listing = () => listingAt(text, file),
): { service?: IpvsService } | { unclear: string } {
  if (text.trim() === '') return {};
  const table = listing();
  if (table instanceof IpvsParseError) return { unclear: table.message };
  const [one, ...more] = table.services;
  const at = one && hostAndPort(one.address);
  const same =
    one !== undefined &&
    one.protocol === asked.protocol &&
    at !== undefined &&
    canonicalAddress(at.host.replace(/^\[|\]$/g, '')) === canonicalAddress(asked.ip) &&
    at.port === `${asked.port}`;
  if (table.view !== 'list' || table.names || table.skipped.length > 0 || one?.partial)
    return { unclear: `${file} is not ipvsadm -Ln's listing of one virtual server` };
  if (!same || more.length > 0)
    return {
      unclear: `${file} lists ${table.services.map((s) => `${s.protocol.toUpperCase()} ${s.address}`).join(', ') || 'no virtual server'}, not ${asked.protocol.toUpperCase()} ${asked.ip}:${asked.port} alone`,
    };
  return { service: one };
}

/** A node's read by address, by its stem, parsed once (the Analysis keeps each). */
export type ListingOf = (stem: string) => IpvsTable | IpvsParseError;

/** The first read by address that lists a virtual server (kube-proxy's IPVS mode shows there),
 * by its stem. */
export function virtualServerListed(
  outputs: NodeOutputs | undefined,
  listing: ListingOf,
): string | undefined {
  return Object.keys(outputs ?? {})
    .sort()
    .find((stem) => {
      if (!stem.startsWith(IPVS_SERVICE_STEM) || outputs![stem]!.trim() === '') return false;
      const table = listing(stem);
      return !(table instanceof IpvsParseError) && table.services.length > 0;
    });
}

/** The virtual servers `exp` expects that the node recorded by address: those read (there or
 * not), as a table of the ones there; or the first listing that cannot stand for its own. */
function virtualServersRead(
  outputs: NodeOutputs,
  exp: ExpectedIpvs,
  node: string,
  listing: ListingOf,
):
  | { table: IpvsTable; read: Set<string> }
  | { unclear: string; source: string; asked: ReturnType<typeof virtualServerRead> } {
  const services: IpvsService[] = [];
  const read = new Set<string>();
  for (const v of exp.virtualServers) {
    const stem = commandStem(virtualServerRead(v));
    const text = outputs[stem];
    if (text === undefined) continue;
    const source = `nodes/${node}/${stem}.txt`;
    const at = virtualServerAt(text, v, source, () => listing(stem));
    if ('unclear' in at) return { unclear: at.unclear, source, asked: virtualServerRead(v) };
    read.add(serverKey(v));
    if (at.service) services.push(at.service);
  }
  const table: IpvsTable = {
    kind: 'ipvs',
    view: 'list',
    names: false,
    services,
    skipped: [],
    duplicates: [],
    elided: [],
  };
  return { table, read };
}

/** One entry's test as recorded: its answer, the file and ipset's words. */
export interface IpsetTested {
  answer: IpsetAnswer;
  source: string;
  words: string;
}

/** The ipset entries `exp` expects that the node tested: each answer, and the sets as far as they
 * tell (a set there, with the entries it holds); or the first answer that is none of ipset's. */
function ipsetEntriesTested(
  outputs: NodeOutputs,
  exp: ExpectedIpvs,
  node: string,
): { ipsets: Map<string, Ipset>; tested: Map<string, IpsetTested> } | { unclear: string } {
  const ipsets = new Map<string, Ipset>();
  const tested = new Map<string, IpsetTested>();
  for (const [set, entries] of exp.ipsets)
    for (const entry of entries) {
      const stem = commandStem(ipsetTest(set, entry));
      const text = outputs[stem];
      if (text === undefined) continue;
      const source = `nodes/${node}/${stem}.txt`;
      const answer = ipsetAnswer(text, set);
      if (!answer) return { unclear: `${source} is not an answer of ipset test` };
      tested.set(entryKey(set, entry), { answer, source, words: text.trim() });
      if (answer === 'no-set') continue;
      // the type is not asked: a test tells only whether the set is there and holds the entry
      if (!ipsets.has(set)) ipsets.set(set, { name: set, type: '', entries: new Set() });
      if (answer === 'held') ipsets.get(set)!.entries.add(entry);
    }
  return { ipsets, tested };
}

type IpvsIpsets = Pick<IpvsRead, 'ipsets' | 'ipsetsSource' | 'ipsetsError'>;

/** One Service's IPVS state on a node as read by address: its virtual servers (of `exp`'s family)
 * and ipset entries, what of them was not read, or why it does not read. */
export function stateByAddress(
  outputs: NodeOutputs,
  exp: ExpectedIpvs,
  node: string,
  base: Pick<IpvsRead, 'bound' | 'expect'> & { ipsetsWhole?: IpvsIpsets },
  listing: ListingOf,
): { source: string; text: string; read?: IpvsRead; failure?: DumpReadFailure } {
  const source = `nodes/${node}/${IPVS_SERVICE_STEM}*.txt`;
  const servers = virtualServersRead(outputs, exp, node, listing);
  const text = exp.virtualServers
    .map((v) => outputs[commandStem(virtualServerRead(v))] ?? '')
    .join('');
  if ('unclear' in servers)
    return {
      source,
      text,
      failure: { source: servers.source, command: servers.asked, reason: servers.unclear },
    };
  const found = base.ipsetsWhole ? undefined : ipsetEntriesTested(outputs, exp, node);
  // none tested: the sets were not read (said as such), not each entry
  const tests = found && ('unclear' in found || found.tested.size > 0) ? found : undefined;
  const ipsets: IpvsIpsets =
    base.ipsetsWhole ??
    (tests === undefined
      ? {}
      : 'unclear' in tests
        ? { ipsetsError: tests.unclear }
        : { ipsets: tests.ipsets, ipsetsSource: `nodes/${node}/ipset-test_*.txt` });
  // the reads its expected state needs that are not in the facts: not compared, said so
  const unread = [
    ...exp.virtualServers
      .filter((v) => !servers.read.has(serverKey(v)))
      .map((v) => commandStem(virtualServerRead(v))),
    ...(tests && !('unclear' in tests)
      ? [...exp.ipsets].flatMap(([set, entries]) =>
          entries
            .filter((e) => !tests.tested.has(entryKey(set, e)))
            .map((e) => commandStem(ipsetTest(set, e))),
        )
      : []),
  ].map((stem) => `nodes/${node}/${stem}.txt`);
  return {
    source,
    text,
    read: {
      table: servers.table,
      ...ipsets,
      ...(base.bound ? { bound: base.bound } : {}),
      expect: base.expect,
      byAddress: {
        virtualServers: servers.read,
        ...(tests && !('unclear' in tests) ? { entries: tests.tested } : {}),
        unread,
      },
    },
  };
}
