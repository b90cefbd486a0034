// Why drift cannot be computed on a node for one family: found by the node's analysis as a typed
// reason, said in one sentence here (drift's error, the trace's refusal, the TUI's Drift screen).
import type { CiliumAgent } from '../dataplane/cilium/agent/agent.js';
import { notStarted, refusedText } from '../dataplane/cilium/agent/refused.js';
import { couldNotRead, type DumpReadFailure } from '../dataplane/dataplane.js';
import { DriftInputError } from '../dataplane/drift.js';
import { IptablesParseError, NoRulesError } from '../dataplane/iptables/read/errors.js';
import { ListingParseError } from '../dataplane/listing-error.js';
import type { DumpCut } from '../dataplane/iptables/read/ruleset.js';

/** Why a node's drift is not computed. */
export type DriftUnavailable =
  /** Cilium's agent holds both families in one table: the IPv4 analysis compares it. */
  | { kind: 'cilium-ipv6' }
  /** Cilium replaces kube-proxy and its agent's Service table was not read (`failure` where a
   * listing was recorded); `agent` where one was found, refused or not started perhaps. */
  | { kind: 'cilium-not-read'; failure?: DumpReadFailure; agent?: CiliumAgent }
  /** IPVS mode's virtual servers or nftables mode's table not read: `listing` lists them. */
  | {
      kind: 'state-not-read';
      mode: 'ipvs' | 'nftables';
      listing: string;
      failure?: DumpReadFailure;
    }
  /** kube-proxy's nftables table or IPVS virtual servers listed in part (cut short): what is
   * missing may be missing from the listing only. */
  | { kind: 'listing-cut'; source: string; line: number; inside: string }
  /** A proxy mode drift does not model (its words from drift.ts unsupportedMode). */
  | { kind: 'mode-unmodelled'; said: string }
  /** The iptables dump cut short: everything after the cut would show as missing. */
  | { kind: 'dump-cut'; source: string; cut: DumpCut };

/** A listing that does not read is said with its file and command; one not recorded, with the
 * command that lists it. */
const notRead = (what: string, verb: 'was' | 'were', listed: string, failure?: DumpReadFailure) =>
  failure
    ? `${what} ${verb} not read: ${couldNotRead(failure)}`
    : `${what} (${listed}) ${verb} not read`;

/** The reason as drift says it, for node `node`. */
export function unavailableText(node: string, u: DriftUnavailable): string {
  return `node ${node}: ${said(u)}`;
}

/** The reason alone, for a line that names the node itself. */
export function said(u: DriftUnavailable): string {
  switch (u.kind) {
    case 'cilium-ipv6':
      return "Cilium's agent holds both families in one table, compared as the node's IPv4";
    case 'cilium-not-read': {
      const table = `Cilium replaces kube-proxy and ${notRead("its agent's Service table", 'was', 'cilium-dbg service list, db/show frontends or bpf lb list', u.failure)}`;
      const refused = u.agent && refusedText(u.agent, false);
      // an agent not started first, a listing recorded that did not read beside it; else the
      // table not read, beside it the start cilium-config would stop (readiness not read)
      const lines =
        u.agent && notStarted(u.agent) && refused
          ? [refused, ...(u.failure ? [table] : [])]
          : [table, ...(refused ? [refused] : [])];
      return lines.join('; ');
    }
    case 'state-not-read':
      return u.mode === 'ipvs'
        ? `kube-proxy runs in IPVS mode and ${notRead('its virtual servers', 'were', u.listing, u.failure)}`
        : `kube-proxy runs in nftables mode and ${notRead('its table', 'was', u.listing, u.failure)}`;
    case 'listing-cut':
      return `${u.source} ends at line ${u.line} inside ${u.inside}: the listing was cut, so it is not compared (what is missing could be missing from the listing only)`;
    case 'mode-unmodelled':
      return u.said;
    case 'dump-cut':
      return `${u.source}${u.cut.line ? `:${u.cut.line}` : ''}: ${u.cut.reason}, so it is not compared (what is missing could be missing from the dump only)`;
  }
}

/** The reason in one short clause, for a line that names the node and says it was not compared
 * (the whole sentence, `said`, is its detail). */
export function saidShort(u: DriftUnavailable): string {
  const read = (what: string, failure?: DumpReadFailure) =>
    `${what} ${failure ? 'could not be read' : 'was not read'}`;
  switch (u.kind) {
    case 'cilium-ipv6':
      return "compared as the node's IPv4";
    case 'cilium-not-read':
      return u.agent && notStarted(u.agent)
        ? "Cilium's agent has not started"
        : read("Cilium's Service table", u.failure);
    case 'state-not-read':
      return read(u.mode === 'ipvs' ? 'the IPVS listing' : 'the nftables table', u.failure);
    case 'listing-cut':
      return `the listing is cut short at line ${u.line}`;
    case 'mode-unmodelled':
      return 'kdebug does not model its proxy mode';
    case 'dump-cut':
      return `the dump looks cut short${u.cut.line ? ` after line ${u.cut.line}` : ''}`;
  }
}

/** What drift throws for input it cannot read: the node not checkable, or its dump unparsed
 * (anything else is a bug, not rules left unread). */
export const isDriftReadFailure = (e: unknown): e is Error =>
  e instanceof DriftInputError ||
  e instanceof IptablesParseError ||
  e instanceof NoRulesError ||
  e instanceof ListingParseError;
