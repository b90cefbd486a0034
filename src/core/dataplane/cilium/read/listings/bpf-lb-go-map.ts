// `cilium bpf lb list -o json` as cilium-cli's local-redirect-policy test prints it in its failure
// ("frontend [X] not found in BPF LB map [map[...]]", lrp.go): the JSON's map, each key cut at its
// first space (its slot), the entries of one frontend joined, printed with Go's %+v. Each entry is
// the table's second column, read as the table's row is.
import { bpfRows } from './bpf-lb-list.js';
import { fail } from '../row-walk.js';
import { excerpt } from '../../../../sanitize.js';
import type { CiliumCut, CiliumTable } from '../listing.js';

const ADDRESS = String.raw`(?:\[[0-9a-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):\d+`;
/** One frontend of the map: "KEY:[" then its first entry (an address, or "backend N not found"). */
export const BPF_GO_MAP = new RegExp(
  String.raw`(?:^|[\s[])${ADDRESS}\S*?:\[(?:${ADDRESS}\S* \(\d+\)|backend \d+ not found)`,
);
/** Where an entry starts inside a frontend's list: Go joins a []string's strings with a space. */
const ENTRY = new RegExp(String.raw` (?=${ADDRESS}\S* \(\d+\)|backend \d+ not found)`);

/** Each key's port as printed, never byte-swapped back: cilium-cli cut the key at its slot, so
 * a 1.17+ protocol-ANY key ("10.96.0.10:53/ANY (1)") is left as the 2021 lbmap printer's
 * network-order key looked ("ADDR:PORT/ANY", no slot); but the local-redirect-policy test that
 * prints this map came years after that printer, whose ports no release of the test ever saw. */
const CONVERTED = true;

const NAMED =
  "cilium-cli's message of `cilium bpf lb list -o json` (Go's %+v of its map, as the local-redirect-policy test prints it)";

/** The frontends of the map, each at the line its key is on. A newline inside the map is the
 * paste's wrapping of the one line Go prints: the text reads without it. */
export function bpfLbGoMap(text: string, source: string): CiliumTable {
  const rows = bpfRows(source);
  const cut: CiliumCut[] = [];
  // each character of the map joined into one line, with the line it came from
  const lineAt: number[] = [];
  let flat = '';
  text.split('\n').forEach((l, i) => {
    flat += l;
    for (let k = 0; k < l.length; k++) lineAt.push(i + 1);
  });
  const first = new RegExp(BPF_GO_MAP.source, 'g').exec(flat);
  if (!first) return fail(source, 1, `not ${NAMED}`);
  const keyAt = first.index + (/^[\s[]/.test(first[0]) ? 1 : 0);
  const before = flat.slice(0, keyAt);
  if (!/map\[$/.test(before.trimEnd()))
    cut.push({
      line: 1,
      reason: `the paste starts inside ${NAMED}: the frontends before ${excerpt(/^\S+?(?=:\[)/.exec(flat.slice(keyAt))![0])} are not in it (run cilium-dbg bpf lb list in the agent for the whole map)`,
    });
  let at = keyAt;
  const key = /(\S+?):\[/y;
  while (at < flat.length) {
    key.lastIndex = at;
    const k = key.exec(flat);
    if (!k) break;
    const open = at + k[0].length;
    const close = listEnd(flat, open);
    const line = lineAt[at]!;
    if (close < 0) {
      cut.push({
        line: lineAt[flat.length - 1]!,
        reason: `the paste ends inside ${NAMED}, in the entries of ${k[1]}: that frontend and any after it are not read`,
      });
      break;
    }
    for (const entry of flat.slice(open, close).split(ENTRY)) {
      const space = entry.indexOf(' ');
      const [word, rest] = space < 0 ? [entry, ''] : [entry.slice(0, space), entry.slice(space)];
      if (!rows.row(k[1]!, word, rest, line, CONVERTED))
        fail(source, line, `not an entry of ${NAMED}: "${excerpt(`${k[1]}:[${entry}`)}"`);
    }
    at = close + 1;
    while (flat[at] === ' ') at++;
  }
  // the map's and the message's closing brackets end it; what follows them is not read: said
  while (at < flat.length && /[\]\s]/.test(flat[at]!)) at++;
  const after = flat.slice(at).trim();
  const notRead =
    after === '' || cut.length > 0
      ? []
      : [
          {
            line: lineAt[at]!,
            reason: `line${lineAt[at] === lineAt.at(-1) ? ` ${lineAt[at]}` : `s ${lineAt[at]}-${lineAt.at(-1)}`} after ${NAMED}, not read: "${excerpt(after)}"`,
          },
        ];
  return {
    form: 'bpf-lb-list',
    source,
    frontends: [...rows.byKey.values()],
    ...(cut.length > 0 ? { cut } : {}),
    ...(notRead.length > 0 ? { notRead } : {}),
    ...rows.swappedOf(),
  };
}

/** The index of the "]" closing a frontend's list that opens before `from` (the flags' brackets
 * inside it counted), -1 where the text ends first. */
function listEnd(text: string, from: number): number {
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']' && --depth === 0) return i;
  }
  return -1;
}
