// A paste that starts inside one of kube-proxy's verdict maps, its "map NAME {" line above the
// paste: its type, comment or elements lines first. The nftables proxier writes each map with its
// own key and verdicts (pkg/proxy/nftables/proxier.go): service-ips "IP . PROTO . PORT : goto
// service-HASH-ns/name/proto/port" (external- where traffic policy is Local), service-nodeports
// "PROTO . PORT : goto ...", firewall-ips "... : goto firewall-...", no-endpoint-services and
// no-endpoint-nodeports "... : goto reject-chain" or drop; the map is told by those alone.
import { classifyLine } from '../../iptables/read/paste/other-lines/classify.js';
import { portChain } from '../trees/port-chain.js';
import type { NftFamily, NftSet } from './listing.js';
import { element, splitTop } from './table-parts.js';

/** kube-proxy's comment on each of its verdict maps, as it writes them. */
const COMMENTS: Record<string, string> = {
  'ClusterIP, ExternalIP and LoadBalancer IP traffic': 'service-ips',
  'NodePort traffic': 'service-nodeports',
  'destinations that are subject to LoadBalancerSourceRanges': 'firewall-ips',
  'vmap to drop or reject packets to services with no endpoints': 'no-endpoint-services',
  'vmap to drop or reject packets to service nodeports with no endpoints': 'no-endpoint-nodeports',
};

/** The lines nft prints inside a map before its closing brace. */
const HEADER = /^(?:type|flags|comment|elements = \{|size|policy|counter|auto-merge)\b/;

/** One element: its key (2 or 3 parts joined by " . ") and its verdict. */
const ELEMENT =
  /^(?:[\da-f.:]+ \. )?(?:tcp|udp|sctp) \. \d+ : (?:(goto|jump) (\S+?)|(drop|accept))$/;

/** The map of kube-proxy's a paste starts inside, with the line of its first header line;
 * undefined where its first lines are not a map's, or its verdicts are not kube-proxy's. */
export function mapAbove(text: string): { name: string; line: number } | undefined {
  const lines = text.slice(0, 4096).split('\n');
  const grepped = grepOfMap(lines);
  if (grepped) return grepped;
  const first = lines.findIndex((l) => HEADER.test(l.trim()));
  // a block's line or a brace before it: the paste does not start inside a map
  if (first < 0 || lines.slice(0, first).some((l) => /[{}]/.test(l))) return undefined;
  let three: boolean | undefined;
  let comment: string | undefined;
  const targets: string[] = [];
  for (const raw of lines.slice(first)) {
    const t = raw.trim();
    if (/[{}]$/.test(t) && !t.startsWith('elements = {')) break;
    const type = /^type (.+?) : verdict;?$/.exec(t);
    if (type) three = type[1]!.split(' . ').length === 3;
    const said = /^comment "(.*)";?$/.exec(t);
    if (said) comment = COMMENTS[said[1]!];
    for (const e of t.replace(/^elements = \{\s*/, '').split(/,\s*/)) {
      const m = ELEMENT.exec(e.replace(/(?<!\s)\s*\}$/, '').trim());
      if (!m) continue;
      three ??= e.split(' . ').length === 3;
      targets.push(m[2] ?? m[3]!);
    }
  }
  const name = comment ?? byVerdicts(three, targets);
  return name ? { name, line: first + 1 } : undefined;
}

/** The map whose verdicts these are: every one a Service port's chain kube-proxy names, its
 * firewall chain, or what it answers a Service without endpoints with. */
function byVerdicts(three: boolean | undefined, targets: string[]): string | undefined {
  if (three === undefined || targets.length === 0) return undefined;
  const kinds = new Set(
    targets.map((t) =>
      t === 'reject-chain' || t === 'drop' ? 'none' : (portChain(t)?.kind ?? 'other'),
    ),
  );
  if (kinds.size !== 1 && !(kinds.size === 2 && kinds.has('service') && kinds.has('external')))
    return undefined;
  if (kinds.has('service') || kinds.has('external'))
    return three ? 'service-ips' : 'service-nodeports';
  if (kinds.has('firewall') && three) return 'firewall-ips';
  if (kinds.has('none')) return three ? 'no-endpoint-services' : 'no-endpoint-nodeports';
  return undefined;
}

/** One element line of a map listed through grep (`nft list map ip kube-proxy service-ips | grep
 * X`): grep keeps the element lines nft wraps the list into, each ending in a comma. */
export const BARE_ELEMENT =
  /^(?:[\da-f.:]+ \. )?(?:tcp|udp|sctp) \. \d+(?: comment "[^"]*")? : (?:(?:goto|jump) \S+?|drop|accept),?$/;

/** The map a paste's first command lists through grep, its element lines right under it; undefined
 * where the command lists no kube-proxy map or no element line follows it. */
function grepOfMap(lines: string[]): { name: string; line: number; grep: true } | undefined {
  const at = lines.findIndex((l) => l.trim() !== '');
  const name = mapListed(lines[at] ?? '')?.name;
  if (!name) return undefined;
  const next = lines.findIndex((l, i) => i > at && l.trim() !== '');
  return next > 0 && BARE_ELEMENT.test(lines[next]!.trim())
    ? { name, line: next + 1, grep: true }
    : undefined;
}

/** One of kube-proxy's maps a typed command lists (`nft list map ip kube-proxy service-ips`), with
 * its table's family; where bare element lines follow it, grep (or the like) picked them. */
export function mapListed(command: string): { family: NftFamily; name: string } | undefined {
  const m = /\bnft (?:-\S+ )*list map (ip6?|inet) \S+ (\S+)/.exec(command);
  return m && Object.values(COMMENTS).includes(m[2]!)
    ? { family: m[1] as NftFamily, name: m[2]! }
    : undefined;
}

/** A grep'ed element line read into its map, each element with its pasted line (`lineAt` an
 * offset's); what does not read as the map's element is said. */
export function bareElements(
  s: NftSet,
  t: string,
  say: (at: number, text: string) => void,
  lineAt: (at: number) => number,
): void {
  for (const e of splitTop(t.replace(/,$/, ''))) {
    const read = element(s, e);
    if (read) s.elements.push({ ...read, line: lineAt(t.indexOf(e)) });
    else say(t.indexOf(e), e);
  }
}

/** A command typed at a prompt: after a part of a listing, the start of another's output. */
export const typedAfterFragment = (t: string): boolean => classifyLine(t).kind === 'prompt';
