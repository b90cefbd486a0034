// kube-proxy's comments and chain names as the trees read them: the Service port name and entry
// kind a comment gives, the endpoint a jump's comment names, the kind of a chain by its name's shape.
import { hash16 } from '../../kube-proxy/chain-names.js';
import type { Table } from '../read/parse.js';
import type { EntryKind } from '../../trees.js';

const COMMENT_KIND: [string, EntryKind][] = [
  [' cluster IP', 'cluster-ip'],
  [' external IP', 'external-ip'],
  [' loadbalancer IP', 'load-balancer'],
];

/** kube-proxy's comment on a KUBE-SVC -> KUBE-SEP jump: "ns/svc:port -> 10.0.0.5:80". */
export const ENDPOINT_COMMENT = / -> (\[[0-9a-fA-F:.]+\]:\d+|[\d.]+:\d+)$/;

/** The address of a host CIDR ("10.0.0.1/32" is 10.0.0.1). */
export function stripHost(cidr: string | undefined): string | undefined {
  if (cidr?.endsWith('/32')) return cidr.slice(0, -3);
  return cidr?.endsWith('/128') ? cidr.slice(0, -4) : cidr;
}

/** The kube-proxy chain kind a name that is not in the paste has, by its shape (its hash perhaps
 * redacted by hand, digits and all). */
export function absentKind(name: string | undefined): string | undefined {
  const m =
    name === undefined ? null : /^(KUBE-(?:SVC|SVL|EXT|FW|XLB|SEP))-[A-Z0-9]{16}$/.exec(name);
  return m?.[1];
}

/** The kube-proxy chain kind of a name cut short of its hash. */
export const cutKind = (name: string) => /^(KUBE-(?:SVC|SVL|EXT|FW|XLB|SEP))-/.exec(name)?.[1];

/** A Service chain's name from its rules' comments ("ns/svc:port -> 10.244.0.3:80", or the bare
 * name of older versions), checked against the chain's hash for each protocol. */
export function nameFromComments(
  nat: Table,
  c: number,
  hash: string,
): { name: string; protocol: string } | undefined {
  const said = new Set<string>();
  for (let k = 0; k < nat.ruleCountOf(c); k++) {
    const comment = nat.comment(nat.ruleIdOf(c, k));
    // "ns/svc:port -> 10.0.0.5:80", "ns/svc:port loadbalancer IP": the name before what follows
    const name = comment && (commentName(comment, '')?.name ?? comment.replace(/ -> .*$/, ''));
    if (!name || !name.includes('/')) continue;
    for (const protocol of ['tcp', 'udp', 'sctp'])
      if (hash16(name + protocol) === hash) return { name, protocol };
    if (/^[^ /]+\/[^ /:]+:[^ ]*$/.test(name)) said.add(name);
  }
  // kube-proxy's comment is the Service port's name even where the hash of an old release does
  // not check out: taken when its rules agree on one, the protocol left unknown
  return said.size === 1 ? { name: [...said][0]!, protocol: '' } : undefined;
}

/** The Service port name and entry kind a kube-proxy comment gives. */
export function commentName(
  comment: string,
  from: string,
): { name: string; kind: EntryKind } | undefined {
  for (const [suffix, kind] of COMMENT_KIND)
    if (comment.endsWith(suffix)) return { name: comment.slice(0, -suffix.length), kind };
  // node-port rules carry the bare name
  return from === 'KUBE-NODEPORTS' && /^[^ ]+\/[^ ]+$/.test(comment)
    ? { name: comment, kind: 'node-port' }
    : undefined;
}
