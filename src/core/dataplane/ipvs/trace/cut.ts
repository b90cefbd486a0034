// Where a packet walk's read of an IPVS listing stopped: a listing cut short holds the virtual
// servers up to the cut, each with its real servers (ipvsadm prints them under it, ipvsadm-save
// after its -A line). A virtual server not read may be past the cut; the one the cut is inside
// may have more real servers past it, so "no real server" is not known there.
import type { ReadStop } from '../../trace/answer.js';
import type { TraceResult } from '../../trace/trace.js';
import type { IpvsTable } from '../read/listing.js';
import { hostPort } from '../../../ipv6.js';

/** The cut of `table` (read from `file`), with per outcome what the walk met that the listing
 * holds in part; undefined for a whole listing. */
export function ipvsReadStop(
  table: IpvsTable,
  file: string,
  { packet, outcomes }: TraceResult,
): ReadStop | undefined {
  const cut = table.cut;
  if (cut === undefined) return undefined;
  const address = hostPort(packet.dst, packet.dport ?? 0);
  const vs = table.services.find((s) => s.protocol === packet.protocol && s.address === address);
  const partly = outcomes.map((o) => {
    // the walk reached IPVS and found no virtual server read for the packet
    if (!vs)
      return packet.protocol !== 'icmp' && o.rules.some((m) => m.table === 'ipvs')
        ? [`the virtual servers past line ${cut}`]
        : [];
    // no real server read under the one the cut is inside: more may follow it
    return o.verdict === 'REJECT' && vs.partial
      ? [`${vs.protocol.toUpperCase()} ${vs.address}`]
      : [];
  });
  return {
    file,
    line: cut,
    why: `the listing ends inside ${table.cutInside ?? 'a line'}: what followed it was not read`,
    partly,
    known: outcomes.map((o) => o.rules.length),
  };
}
