// Why a dump shows no Service: its entry chain or map is past a cut or outside the part of the
// table pasted, the table holds none, kube-proxy's IPVS mode keeps them, or Cilium replaced it.
import type { NftTable } from '../../core/dataplane/nftables/read/listing.js';
import type { Ruleset } from '../../core/dataplane/iptables/read/parse.js';
import { ipvsModeNat } from '../../core/dataplane/iptables/read/dump/summary.js';
import {
  cutIn,
  natInPart,
  nftParts,
  type NftPart,
  type OrphansUnproven,
} from '../../core/dataplane/orphans.js';

/** What the text calls the rules it read: a pasted file's "paste", a node's (recorded or read over
 * ssh) "dump". */
export type Held = 'paste' | 'dump';

/** Why an iptables dump shows no Service: its KUBE-SERVICES is past a cut or outside the part of
 * the nat table pasted, or Cilium replaced kube-proxy (its CILIUM_ chains and no KUBE-SERVICES:
 * GKE Dataplane V2, kube-proxy-free). */
export function noServiceRules(rs: Ruleset, held: Held): string {
  const said = familiesSaid(rs, held);
  const router = kubeRouterChains(rs);
  const roles = ROLES.map((role) => router.filter((n) => roleOf(n) === role))
    .filter((of) => of.length > 0)
    .map(
      (of) =>
        `${of.slice(0, 3).join(', ')}${of.length > 3 ? ' ...' : ''} ${of.length === 1 ? 'is' : 'are'} kube-router's (its ${roleOf(of[0]!)})`,
    );
  return roles.length === 0 ? said : `${said}; ${roles.join('; ')}, not kube-proxy's`;
}

/** kube-router's chains: its network policy controller's KUBE-ROUTER-INPUT, -FORWARD and -OUTPUT,
 * each Pod's KUBE-POD-FW-* and each policy's KUBE-NWPLCY-*; its IPVS service proxy's own. */
function kubeRouterChains(rs: Ruleset): string[] {
  const names = rs.tables.flatMap((t) => t.chains.map((c) => c.name));
  return [...new Set(names.filter((n) => /^KUBE-(?:ROUTER-|POD-FW-|NWPLCY-)/.test(n)))];
}

/** The chains kube-router's service proxy makes (network_services_controller's firewall, hairpin
 * and fwmark chains), not its network policy controller. */
const ROUTER_PROXY = /^KUBE-ROUTER-(?:SERVICES|HAIRPIN|FWMARK)$/;
const ROLES = ['service proxy', 'network policy firewall'] as const;
const roleOf = (chain: string) => ROLES[ROUTER_PROXY.test(chain) ? 0 : 1];

/** noServiceRules without what other components' chains the dump holds. */
function familiesSaid(rs: Ruleset, held: Held): string {
  // each family's tables on their own (kube-proxy writes them alike, a paste may hold them apart)
  const families = rs.families();
  if (families.length > 1) {
    const said = families.map((f) => familiesSaid(rs.ofFamily(f), held));
    return said.every((s) => s === said[0])
      ? said[0]!
      : families.map((f, i) => `${f}: ${said[i]}`).join('; ');
  }
  const nat = rs.table('nat');
  const cut = nat?.partial.get('KUBE-SERVICES');
  if (cut) return `no Service entry in the ${held}: KUBE-SERVICES (${cut})`;
  // rules no *table line names, and nothing in them tells: the paste may be nat's all the same
  if (!nat && rs.tables.some((t) => t.untold))
    return `no Service rules read: nothing in the ${held} tells which table its rules are (no *table line), so they were read as filter; kube-proxy's Service rules are in the nat table (\`--table nat\` reads them as nat's)`;
  if (!nat)
    return `no Service rules in the ${held}: it holds no nat table (only ${rs.tables.map((t) => t.name).join(', ')}), where kube-proxy's Service rules are`;
  // KUBE-SERVICES jumped to, or the paste cut, and the chain itself not in it: nothing is known
  const jumped = nat.jumpsTo(['KUBE-SERVICES']);
  // a chain whose first rules lie above the paste is no cut: the paste is a part of the table
  const truncated = [...nat.partial.keys()].some((c) => !nat.cutAbove.has(c)) || cutIn(rs, nat);
  if (nat.indexOf('KUBE-SERVICES') < 0 && (jumped || truncated))
    return `no Service entry in the ${held}: KUBE-SERVICES${jumped ? ', which the nat table jumps to,' : ''} is not in it`;
  const cilium = rs.tables.some((t) => t.chains.some((c) => c.name.startsWith('CILIUM_')));
  if (cilium && !rs.tables.some((t) => t.indexOf('KUBE-SERVICES') >= 0))
    return 'no Service rules found: the CILIUM_ chains and no KUBE-SERVICES say Cilium replaces kube-proxy on this node (GKE Dataplane V2, kube-proxy-free Cilium): its Services are BPF map entries; `cilium-dbg service list` in the Cilium agent Pod (anetd on GKE) shows them';
  if (nat.indexOf('KUBE-SERVICES') < 0 && natInPart(rs))
    return `no Service entry in the ${held}: it holds part of the nat table (not its built-in chains), and KUBE-SERVICES is not in it`;
  if (nat.ruleCount === 0 && nat.indexOf('KUBE-SERVICES') < 0 && !natInPart(rs))
    return `no Service rules found: the ${held} holds the whole nat table, and it holds no rules`;
  if (nat.indexOf('KUBE-SERVICES') < 0)
    return `no Service rules found: the nat table holds no KUBE-SERVICES chain`;
  // kube-proxy's IPVS mode writes KUBE-SERVICES with ipset matches alone: no chain per Service
  if (ipvsModeNat(nat))
    return `no Service rules: the ${held}'s KUBE-SERVICES holds no per-Service entries, as kube-proxy's IPVS mode writes it: the Services are IPVS virtual servers (\`ipvsadm -Ln\` lists them)`;
  return 'no Service rules found: KUBE-SERVICES in the nat table holds no per-Service entries';
}

/** An nft listing's part, as a phrase. */
const NFT_PART: Record<NftPart, string> = {
  headless: 'its table line is not in it',
  cut: 'it is cut',
  elided: 'it elides lines',
  diff: "it is a diff's hunk",
  'maps-missing': 'its rules use maps it does not hold',
  unread: 'lines of it were not read',
  'one-block': '`nft list chain|map|set` lists that block alone',
  'script-part':
    "it is part of kube-proxy's nft script: no line of it adds a chain, set or map its lines add to",
};

/** Why an nft listing shows no Service: of a whole table, its service-ips map is empty or absent;
 * of part of one (its table line, its end or lines elided, a diff's hunk, maps its rules use not
 * in it), the map or its elements are not in the paste, and nothing is said of the table. */
export function nftNoService(t: NftTable, held: Held): string {
  const part = nftParts(t).map((p) => NFT_PART[p]);
  const map = t.set('service-ips');
  if (part.length === 0)
    return map
      ? 'no Service rules found (no service-ips elements in the table)'
      : 'no Service rules found (the listing holds no service-ips map)';
  const absent = map
    ? 'no element of the service-ips map is in it'
    : 'the service-ips map is not in it';
  return `no Service entry in the ${held}: ${absent} (the ${held} holds part of the table: ${part.join(', ')})`;
}

/** Why the dump's unreached chains are not called orphans, in words. */
export function unprovenText(u: OrphansUnproven, held: Held): string {
  if (u.table === 'kube-proxy')
    return `the listing holds part of its table (${u.parts.map((p) => NFT_PART[p]).join(', ')}): what reaches them may lie outside it`;
  return u.cutAfter
    ? `the dump is cut short after line ${u.cutAfter}: a jump to them may lie past the cut`
    : `the ${held} holds part of the nat table: a jump to them may lie outside it`;
}
