// How an ipvsadm listing ends. ipvsadm ends every line it prints with a newline: a recorded
// listing (the raw stdout kdebug saved) whose last line has none was cut there, and that line is
// not read; a paste's is only "may be cut", unless its shape says so. A virtual server that ends
// a paste (nothing after its row) has real servers the paste does not show, not none.
import type { RuleCommand } from './rule-command.js';
import { SCHEDULERS } from '../../schedulers.js';
import type { ListingRead } from './state.js';

/** Where the paste's last line is, and whether a newline ends it. */
export interface ListingEnd {
  /** The raw stdout of a command kdebug ran (a snapshot's file), not a person's paste. */
  recorded: boolean;
  /** No newline after the last line that holds anything: it may stop mid-way. */
  unterminated: boolean;
}

/** The listing's last line, not read: cut there (the paste's or the recorded output's). */
export function cutLastLine(r: ListingRead, no: number): void {
  r.cut = no;
  if (r.current) r.current.partial = `the ${noun(r)} is cut at line ${no} inside its real servers`;
}

/** Whether the listing's last line is to be read: a recorded listing's, without its newline, is
 * cut (ipvsadm ends every line with one). */
export function readsLastLine(r: ListingRead, no: number): boolean {
  if (no !== r.last || !r.end.recorded || !r.end.unterminated) return true;
  cutLastLine(r, no);
  return false;
}

/** What a listing's messages call it: a node's recorded output, else the paste. */
export const noun = (r: ListingRead) => (r.end.recorded ? 'listing' : 'paste');

/** A saved real server's line lacking what ipvsadm-save prints on every one (`-r RIP:RPORT`,
 * `-m|-g|-i`, `-w N`): what it lacks, or undefined for a whole one. */
export function savedRowLacks(command: RuleCommand): string | undefined {
  const lacks = [
    ...(command.serverPort === false ? ["the real server's port"] : []),
    ...(command.forward === undefined ? ['its forwarding method (-m, -g or -i)'] : []),
    ...(command.weight === undefined || !Number.isInteger(command.weight) ? ['its weight'] : []),
  ];
  return lacks.length > 0 ? lacks.join(', ') : undefined;
}

/** A saved virtual server's scheduler, as ipvsadm-save prints it on every `-A` line: missing, or
 * only the start of one's name ("-s wl" of wlc), the line stops short. */
export const schedulerCut = (scheduler: string | undefined): boolean =>
  scheduler === undefined ||
  (!SCHEDULERS.has(scheduler) && [...SCHEDULERS].some((s) => s.startsWith(scheduler)));

/** At the end of a paste: the virtual server its last row is, with nothing after it, shows no
 * real server the paste holds; ipvsadm prints them after it, so whether it has any is unknown. A
 * recorded listing ends where ipvsadm's output did: one there has none. */
export function endsAtVirtualServer(r: ListingRead): void {
  const vs = r.current;
  if (r.end.recorded || !vs || vs.line !== r.last || vs.realServers.length > 0) return;
  vs.partial ??= `the paste ends at its row (line ${vs.line}): its real servers, if it has any, are not in the paste`;
}
