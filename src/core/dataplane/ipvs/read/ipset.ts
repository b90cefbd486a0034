// kube-proxy's ipsets (IPVS mode) as `ipset list -o save` prints them ("create NAME TYPE ...",
// "add NAME ENTRY"), or as plain `ipset list` does ("Name: ...", "Members:", one entry a line).
// Entries are kept as ipset prints them ("10.96.0.10,udp:53"); IPv6 addresses in Go's form.
import { canonicalAddress } from '../../../ipv6.js';
import { IpvsParseError } from './listing.js';

export interface Ipset {
  name: string;
  /** "hash:ip,port", "bitmap:port" ... */
  type: string;
  entries: Set<string>;
}

/** The sets of either form, by name. */
export function parseIpsets(text: string, file = '<input>'): Map<string, Ipset> {
  const sets = new Map<string, Ipset>();
  let members: Ipset | undefined; // plain form: the set whose "Members:" lines follow
  let named: string | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.replace(/\r$/, '').trim();
    if (!t) {
      members = undefined;
      continue;
    }
    const w = t.split(/\s+/);
    if (w[0] === 'create' && w.length >= 3) sets.set(w[1]!, set(w[1]!, w[2]!));
    else if (w[0] === 'add' && w.length >= 3) {
      const s = sets.get(w[1]!);
      if (!s) throw new IpvsParseError(file, i + 1, `an entry of a set not created before: ${t}`);
      s.entries.add(canonicalEntry(w[2]!));
    } else if (w[0] === 'Name:') named = w[1];
    else if (w[0] === 'Type:' && named) sets.set(named, set(named, w[1] ?? ''));
    else if (w[0] === 'Members:') members = named ? sets.get(named) : undefined;
    else if (members) members.entries.add(canonicalEntry(w[0]!));
  }
  return sets;
}

const set = (name: string, type: string): Ipset => ({ name, type, entries: new Set() });

/** An entry with its IPv6 addresses printed as Go prints them (kube-proxy's own spelling):
 * "fd00::a,tcp:53", "1.2.3.4,tcp:80,10.0.0.0/8". */
export function canonicalEntry(entry: string): string {
  if (!entry.includes('::') && !/[0-9a-f]{1,4}:[0-9a-f]{1,4}:/i.test(entry)) return entry;
  return entry
    .split(',')
    .map((part) => {
      if (/^(tcp|udp|sctp):/.test(part)) return part;
      const [addr, prefix] = part.split('/');
      return `${canonicalAddress(addr!)}${prefix === undefined ? '' : `/${prefix}`}`;
    })
    .join(',');
}
