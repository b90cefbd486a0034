// Why a dump shows no Service: its entry chain or map is past a cut or outside the part of the
// table pasted, the table holds none, or Cilium replaced kube-proxy.
import { missingSets, type NftTable } from '../../core/dataplane/nftables/read/listing.js';
import type { Ruleset } from '../../core/dataplane/iptables/read/parse.js';
import type { Table } from '../../core/dataplane/iptables/read/table.js';

/** Whether the dump's cut (its end, or its start mid-rule) lies in this table: never in one its
 * COMMIT ended, a jump crossing no table (a cut past nat's COMMIT, in filter, leaves nat whole). */
const cutIn = (rs: Ruleset, t: Table) => !t.committed && rs.cut !== undefined;

/** Whether a dump holds only part of its nat table: cut, a segment, or some chains without the
 * built-in ones (iptables-save, -S and -L print every built-in chain of a table they list). */
function natInPart(rs: Ruleset): boolean {
  // each family's nat table: where the dump holds both, either in part is a part
  const families = rs.families();
  if (families.length > 1) return families.some((f) => natInPart(rs.ofFamily(f)));
  const nat = rs.table('nat');
  if (!nat) return false;
  const declared = (name: string) =>
    nat.indexOf(name) >= 0 && nat.chainLine(nat.indexOf(name)) !== undefined;
  return (
    nat.partial.size > 0 ||
    cutIn(rs, nat) ||
    !['PREROUTING', 'OUTPUT', 'POSTROUTING'].every(declared)
  );
}

/** Why an iptables dump shows no Service: its KUBE-SERVICES is past a cut or outside the part of
 * the nat table pasted, or Cilium replaced kube-proxy (its CILIUM_ chains and no KUBE-SERVICES:
 * GKE Dataplane V2, kube-proxy-free). */
export function noServiceRules(rs: Ruleset): string {
  // each family's tables on their own (kube-proxy writes them alike, a paste may hold them apart)
  const families = rs.families();
  if (families.length > 1) {
    const said = families.map((f) => noServiceRules(rs.ofFamily(f)));
    return said.every((s) => s === said[0])
      ? said[0]!
      : families.map((f, i) => `${f}: ${said[i]}`).join('; ');
  }
  const nat = rs.table('nat');
  const cut = nat?.partial.get('KUBE-SERVICES');
  if (cut) return `no Service entry in the paste: KUBE-SERVICES (${cut})`;
  // rules no *table line names, and nothing in them tells: the paste may be nat's all the same
  if (!nat && rs.tables.some((t) => t.untold))
    return "no Service rules read: nothing in the paste tells which table its rules are (no *table line), so they were read as filter; kube-proxy's Service rules are in the nat table (`--table nat` reads them as nat's)";
  if (!nat)
    return `no Service rules in the paste: it holds no nat table (only ${rs.tables.map((t) => t.name).join(', ')}), where kube-proxy's Service rules are`;
  // KUBE-SERVICES jumped to, or the paste cut, and the chain itself not in it: nothing is known
  const jumped = nat.jumpsTo(['KUBE-SERVICES']);
  // a chain whose first rules lie above the paste is no cut: the paste is a part of the table
  const truncated = [...nat.partial.keys()].some((c) => !nat.cutAbove.has(c)) || cutIn(rs, nat);
  if (nat.indexOf('KUBE-SERVICES') < 0 && (jumped || truncated))
    return `no Service entry in the paste: KUBE-SERVICES${jumped ? ', which the nat table jumps to,' : ''} is not in it`;
  const cilium = rs.tables.some((t) => t.chains.some((c) => c.name.startsWith('CILIUM_')));
  if (cilium && !rs.tables.some((t) => t.indexOf('KUBE-SERVICES') >= 0))
    return 'no Service rules found: the CILIUM_ chains and no KUBE-SERVICES say Cilium replaces kube-proxy on this node (GKE Dataplane V2, kube-proxy-free Cilium): its Services are BPF map entries; `cilium-dbg service list` in the Cilium agent Pod (anetd on GKE) shows them';
  if (nat.indexOf('KUBE-SERVICES') < 0 && natInPart(rs))
    return 'no Service entry in the paste: it holds part of the nat table (not its built-in chains), and KUBE-SERVICES is not in it';
  return 'no Service rules found (no KUBE-SERVICES entries in the nat table)';
}

/** Why an nft listing holds part of its table, one phrase each; none for a whole table. */
const nftInPart = (t: NftTable): string[] =>
  [
    t.headless && 'its table line is not in it',
    t.cut && 'it is cut',
    (t.elided?.length ?? 0) > 0 && 'it elides lines',
    t.paste?.diff && "it is a diff's hunk",
    missingSets(t).length > 0 && 'its rules use maps it does not hold',
    (t.unread?.length ?? 0) > 0 && 'lines of it were not read',
  ].filter((x): x is string => typeof x === 'string');

/** Why an nft listing shows no Service: of a whole table, its service-ips map is empty or absent;
 * of part of one (its table line, its end or lines elided, a diff's hunk, maps its rules use not
 * in it), the map or its elements are not in the paste, and nothing is said of the table. */
export function nftNoService(t: NftTable): string {
  const part = nftInPart(t);
  const map = t.set('service-ips');
  if (part.length === 0)
    return map
      ? 'no Service rules found (no service-ips elements in the table)'
      : 'no Service rules found (the listing holds no service-ips map)';
  const absent = map
    ? 'no element of the service-ips map is in it'
    : 'the service-ips map is not in it';
  return `no Service entry in the paste: ${absent} (the paste holds part of the table: ${part.join(', ')})`;
}

/** Why no chain of a dump held in part can be called an orphan (a jump to it may lie outside the
 * part read), in words; undefined for a whole table, where no entry point reaching it proves it. */
export function orphansUnproven(d: Ruleset | NftTable): string | undefined {
  if ('sets' in d) {
    const part = [d, d.paste?.also].flatMap((t) => (t ? nftInPart(t) : []));
    return part.length > 0
      ? `the listing holds part of its table (${[...new Set(part)].join(', ')}): what reaches them may lie outside it`
      : undefined;
  }
  if (!natInPart(d)) return undefined;
  const nat = d.families().map((f) => d.ofFamily(f).table('nat'));
  const cut = nat.some((t) => t && cutIn(d, t)) ? d.cut : undefined;
  return cut?.line
    ? `the dump is cut short after line ${cut.line}: a jump to them may lie past the cut`
    : 'the paste holds part of the nat table: a jump to them may lie outside it';
}
