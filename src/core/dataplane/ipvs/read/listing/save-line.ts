// ipvsadm's rule language: what `ipvsadm-save -n` prints ("-A -t 10.96.0.10:53 -s rr -p 10800",
// "-a -t 10.96.0.10:53 -r 10.244.0.2:53 -m -w 1"), or the same options typed as ipvsadm commands,
// in any order as ipvsadm's getopt takes them: applied in order, as ipvsadm would.
import type { IpvsRealServer, IpvsService } from '../listing.js';
import { isName } from '../addresses.js';
import { ipvsadmDest, ruleCommand, type RuleCommand } from './rule-command.js';
import { unreadable, type ListingRead } from './state.js';
import { bareStart } from './elisions.js';
import { serviceKey } from './virtual-server-line.js';
import { cutLastLine, savedRowLacks, schedulerCut } from './end.js';

/** Reads a saved or typed ipvsadm command; false for any other line. */
export function readSaveLine(r: ListingRead, t: string, no: number): boolean {
  const command = ruleCommand(t);
  if (!command) return false;
  bareStart(r);
  // ipvsadm-save prints each virtual server's real servers after it: one named first after an
  // elision by its real server may have more in it
  const elision = r.savedAfter;
  r.savedAfter = undefined;
  if (command.typed) r.typed.push(no);
  if (command.unknown) r.unknownOptions.push({ line: no, options: command.unknown });
  // `ipvsadm-save` without -n saves names as `ipvsadm -l` prints them
  if (!command.typed)
    r.names ||=
      (command.protocol !== 'fwmark' && isName(command.address)) ||
      (command.server !== undefined && isName(command.server));
  r.view ??= 'save';
  r.header = true; // the commands say every real server they add
  r.inListing = true;
  if (command.op === 'A' || command.op === 'E') editService(r, command, t, no);
  else if (command.op === 'D') deleteService(r, command);
  else editRealServer(r, command, elision, t, no);
  return true;
}

/** -A adds a virtual server (or repeats one), -E edits one added before. */
function editService(r: ListingRead, command: RuleCommand, t: string, no: number): void {
  const { op } = command;
  const key = serviceKey(command.protocol, command.address, command.ipv6);
  const owner = r.byAddress.get(key);
  if (op === 'A' && owner) {
    r.duplicates.push(no);
    r.current = owner;
    return;
  }
  // ipvsadm-save prints every virtual server's scheduler whole: the last line without it stops short
  if (op === 'A' && !command.typed && no === r.last && schedulerCut(command.scheduler)) {
    cutLastLine(r, no);
    return;
  }
  if (op === 'E' && !owner) {
    unreadable(r, no, `an edit of a virtual server not added before: ${t.slice(0, 200)}`);
    return;
  }
  const s: IpvsService = owner ?? {
    protocol: command.protocol,
    address: command.address,
    ...(command.ipv6 ? { ipv6: true as const } : {}),
    realServers: [],
    line: no,
  };
  s.scheduler = command.scheduler ?? (op === 'E' ? s.scheduler : undefined) ?? 'wlc';
  if (command.persistent !== undefined) s.persistent = command.persistent;
  else if (op === 'A') delete s.persistent;
  if (!owner) {
    r.services.push(s);
    r.byAddress.set(key, s);
  }
  r.current = s;
}

/** -D deletes a virtual server. */
function deleteService(r: ListingRead, command: RuleCommand): void {
  const key = serviceKey(command.protocol, command.address, command.ipv6);
  const owner = r.byAddress.get(key);
  if (!owner) return;
  r.services.splice(r.services.indexOf(owner), 1);
  r.byAddress.delete(key);
}

/** -a adds a real server, -e edits one, -d deletes one, of a virtual server added before. */
function editRealServer(
  r: ListingRead,
  command: RuleCommand,
  elision: number | undefined,
  t: string,
  no: number,
): void {
  const owner = r.byAddress.get(serviceKey(command.protocol, command.address, command.ipv6));
  // its virtual server's line may be among the lines an elision left out
  if (!owner && r.afterElision) {
    r.ownerElided.push(no);
    return;
  }
  if (!owner) {
    unreadable(r, no, `a real server of a virtual server not added before: ${t.slice(0, 200)}`);
    return;
  }
  r.current = owner;
  if (elision !== undefined)
    owner.partial ??= `an elision precedes its real servers at line ${elision}: it may have more`;
  // ipvsadm-save prints each real server's port, forwarding and weight: a line without one is
  // cut short (the last), or not its output; never read with ipvsadm's defaults
  const lacks = command.op === 'a' && !command.typed ? savedRowLacks(command) : undefined;
  if (lacks && no === r.last) return cutLastLine(r, no);
  if (lacks) {
    owner.partial ??= `its real server at line ${no} lacks ${lacks}, which ipvsadm-save prints on every one: not read`;
    return;
  }
  // the kernel finds the real server an edit or delete names by its address and port, or answers
  // ENOENT ("No such destination", ipvsadm says): neither ever adds one
  if (command.op === 'd') {
    const at = owner.realServers.findIndex((s) => s.address === command.server);
    if (at >= 0) owner.realServers.splice(at, 1);
    else r.noSuchDestination.push({ line: no, op: 'd', server: command.server! });
    return;
  }
  // read as ipvsadm applies it: a typed command's defaults are ipvsadm's, not kube-proxy's
  const { server, forward, weight } = ipvsadmDest(command);
  const at = owner.realServers.findIndex((s) => s.address === server);
  if (command.op === 'a' && at >= 0) {
    r.duplicates.push(no);
    return;
  }
  if (command.op === 'e' && at < 0) {
    r.noSuchDestination.push({ line: no, op: 'e', server });
    return;
  }
  const rs: IpvsRealServer = { address: server, forward, weight, line: no };
  if (at >= 0) owner.realServers.splice(at, 1, rs);
  else owner.realServers.push(rs);
}
