// kube-proxy's KUBE-SEP chains, one per endpoint: each read once for its DNAT address, its hairpin
// masquerade rule and quirks, and made into the trees' endpoints.
import type { Table } from '../read/parse.js';
import { DNAT_QUIRK } from '../read/rule/target.js';
import { unreadText } from '../read/paste/list-view/unread.js';
import type { TreeEndpoint } from '../../trees.js';
import { ENDPOINT_COMMENT, stripHost } from './comments.js';

/** The KUBE-SEP chains of one nat table. */
export class KubeSepChains {
  // What every KUBE-SEP chain says, read once in the dump's own order and kept by chain index:
  // its numbers side by side in `sep` (see SEP: the jumps come in random order, and each
  // separate array would be a cache miss) and its DNAT address.
  sep = new Int32Array(0);
  sepAddress: (string | undefined)[] = [];
  private readonly sepInferredIP = new Map<number, string>();

  /** Reads KUBE-SEP chain c once (the whole dump in its own order, or on first jump to it). */
  readSep(nat: Table, c: number): void {
    const at = c * SEP_STRIDE + SEP.flags;
    if ((this.sep[at]! & SEP_READ) !== 0) return;
    this.sep[at] = SEP_READ;
    if (nat.kindOf(c) !== 'KUBE-SEP') return;
    let address: string | undefined;
    let f = SEP_CHAIN | SEP_READ;
    let hairpin = -1;
    const count = nat.ruleCountOf(c);
    for (let k = 0; k < count; k++) {
      const id = nat.ruleIdOf(c, k);
      if (nat.isDnat(id)) {
        // the first DNAT translates: a rule after it is never reached
        address ??= nat.to(id);
        if (nat.hidesDnatTarget(id)) f |= SEP_QUIRK;
      } else if (nat.marksForMasquerade(id) && nat.hasSource(id)) hairpin = id;
      // a masquerade whose source an `iptables -L` paste printed as a name: maybe the hairpin
      else if (
        nat.marksForMasquerade(id) &&
        nat.rule(id).matches.some((m) => unreadText(m) !== undefined)
      )
        f |= SEP_UNSURE;
      else if (nat.hasSource(id) && nat.target(id) === 'MARK' && OLD_HAIRPIN.test(nat.text(id)))
        hairpin = id; // kube-proxy v1.1: the masquerade mark set in the KUBE-SEP chain itself
    }
    if (hairpin >= 0) f |= SEP_HAIRPIN;
    if (f & SEP_QUIRK && address === undefined && hairpin >= 0)
      this.sepInferredIP.set(c, stripHost(nat.source(hairpin))!);
    this.sep[at] = f;
    this.sepAddress[c] = address;
    nat.nameOf(c); // decoded here, in the dump's order; endpoints read the table's cache
  }

  /** A new endpoint for the KUBE-SEP chain at index c, jumped to from `line`. */
  endpoint(nat: Table, c: number, line: number): TreeEndpoint {
    const f = (this.sep[c * SEP_STRIDE + SEP.flags]! |= SEP_REACHED);
    const ep: TreeEndpoint = {
      address: this.sepAddress[c],
      ruleProbability: undefined,
      chain: nat.nameOf(c),
      probability: 0,
      // kube-proxy writes it in every KUBE-SEP chain: its absence is said only of a chain the
      // paste declares (a grep'd paste keeps some of a chain's rules, not its declaration)
      hairpinMasquerade:
        (f & SEP_HAIRPIN) !== 0
          ? true
          : nat.chainLine(c) !== undefined && (f & SEP_UNSURE) === 0
            ? false
            : null,
      affinity: false,
      line,
    };
    // a chain the paste holds only in part: what it does not show may be past the cut (a whole
    // dump has none: its 100,000 names are not hashed to find so)
    const partial = nat.partial.size > 0 ? nat.partial.get(ep.chain) : undefined;
    if (partial !== undefined) {
      ep.chainPartial = partial;
      if (ep.hairpinMasquerade === false) ep.hairpinMasquerade = null;
    }
    if ((f & SEP_QUIRK) !== 0) {
      ep.quirk = DNAT_QUIRK;
      const ip = this.sepInferredIP.get(c);
      if (ip !== undefined) ep.inferredIP = ip;
    }
    return ep;
  }
}

/** A jump to a KUBE-SEP chain the paste does not have; kube-proxy (v1.28 on) names the
 * endpoint in the jump's comment ("ns/svc:port -> 10.0.0.5:80"), which is read as such. */
export function absentEndpoint(name: string, line: number, comment?: string): TreeEndpoint {
  const said = comment === undefined ? undefined : ENDPOINT_COMMENT.exec(comment)?.[1];
  return {
    address: said,
    ...(said !== undefined ? { addressFromComment: true } : {}),
    chain: name,
    probability: 0,
    hairpinMasquerade: null,
    affinity: false,
    chainMissing: true,
    line,
  };
}

/** Resolves the jumps of every KUBE-SVC / SVL chain in the dump's order: the rules are then read
 * in sequence, where following the trees would read them scattered (15% of the trees' time). */
export function resolveEndpointJumps(nat: Table): void {
  for (let c = 0; c < nat.chainCount; c++) {
    const kind = nat.kindOf(c);
    if (kind !== 'KUBE-SVC' && kind !== 'KUBE-SVL') continue;
    const n = nat.ruleCountOf(c);
    for (let k = 0; k < n; k++) nat.targetIndex(nat.ruleIdOf(c, k));
  }
}

/** A KUBE-SEP chain's numbers: the endpoints() call that last reached it and its endpoint's
 * position in that call's list (the dedupe), and SEP_* flags. */
export const SEP = { call: 0, position: 1, flags: 2 } as const;
export const SEP_STRIDE = 3;
export const SEP_CHAIN = 1; // the chain is a KUBE-SEP chain
const SEP_HAIRPIN = 2;
const SEP_QUIRK = 4;
export const SEP_REACHED = 8; // a jump reached it (not an orphan)
const SEP_READ = 16; // readSep has read it
const SEP_UNSURE = 32; // a masquerade rule with a match not read: its hairpin rule unknown

/** kube-proxy's hairpin rule from before its KUBE-MARK-MASQ chain, the mark set in the KUBE-SEP
 * chain itself: v1.1's `--set-xmark 0x4d415351/0xffffffff`, or a mark that is its own mask
 * (`--set-xmark 0x00004000/0x00004000`, as the old Debug Services page quotes it). */
const OLD_HAIRPIN =
  / --set-x?mark (?:0x4d415351(?:\/0xffffffff)?|0x0*([1-9a-f]0*)\/0x0*\1)(?: |$)/i;
