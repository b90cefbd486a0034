// Reads each listing Cilium's agent prints of its Services into one CiliumTable: `cilium(-dbg)
// service list` (text and -o json), `cilium(-dbg) bpf lb list`, the load-balancer tables of 1.17+
// (`db/show frontends`, `db/show backends`) and the maps dump of Cilium's own tests. Prompts,
// commands and other text around the listing are skipped; a row that does not read is an error
// with its line, never a guess.
import { stripColours } from '../../colours.js';
import {
  CiliumParseError,
  backendState,
  formatAddress,
  frontendKey,
  frontendType,
  parseAddress,
  type BackendState,
  type CiliumBackend,
  type CiliumCut,
  type CiliumForm,
  type CiliumFrontend,
  type CiliumTable,
} from './listing.js';
import { withoutAgentErrors } from './agent-errors.js';
import { withoutKubectlNoise } from './kubectl-noise.js';
import { mapsDump } from '../maps/read-dump.js';
import { excerpt } from '../../../sanitize.js';
import { closingBracket } from '../../brackets.js';
import { ELISION } from '../../elisions.js';

const HEADERS: [RegExp, CiliumForm][] = [
  [/^(?:ID\s+)?Frontend\s+(?:Service Type\s+)?Backend\b/, 'service-list'],
  [/^SERVICE ADDRESS\s+BACKEND ADDRESS\b/, 'bpf-lb-list'],
  // with every column, or those a script selects (Address and any of its own columns)
  [/^Address\s+(?:.*\s)?(?:Type|ServiceName|PortName|Backends|RedirectTo)(?:\s|$)/, 'db-frontends'],
  // 1.17, 1.18: a row per backend (Instances); 1.19 on: a row per Service and backend (its
  // State among the columns, or the two first alone where some columns are selected)
  [/^(?:Address\s+.*\bInstances\b|Instances\s+Address\b|Service\s+Address(?:\s|$))/, 'db-backends'],
];

/** Rows that say their listing where its header was cut off or grepped away. */
const ROWS: [RegExp, CiliumForm][] = [
  // "ID  FRONTEND  TYPE  1 => BACKEND"; before 1.6 there was no Service Type column
  [/^\d+\s+\S+:\d+\S*\s+(?:[A-Za-z]+\s+)?\d+ => /, 'service-list'],
  // a frontend without backends: its Service Type ends the row
  [
    /^\d+\s+\S+:\d+\S*\s+(?:ClusterIP|NodePort|ExternalIPs|HostPort|LoadBalancer|LocalRedirect)(?: \(Remote\))?$/,
    'service-list',
  ],
  // `cilium service get` before 1.14: "10.32.95.217:6379 =>", then its backends
  [/^\S+:\d+\S* =>$/, 'service-list'],
  [/^\S+:\d+\S*(?: \(\d+\))?\s+(?:0\.0\.0\.0|\[::\]):0 \(\d+\) \(0\) \[/, 'bpf-lb-list'],
  // before 1.10 the Service's own row has no slot: "10.254.162.28:8080  0.0.0.0:0 (59) [ClusterIP]"
  [/^\S+:\d+\s+(?:0\.0\.0\.0|\[::\]):0 \(\d+\) \[/, 'bpf-lb-list'],
  // a backend's row (a grep for it): "SVC[/PROTO] [(slot)]  BACKEND[/PROTO] (revnat) (slot)"
  [/^\S+:\d+\S*(?: \(\d+\))?\s+\S+:\d+\S* \(\d+\) \(\d+\)$/, 'bpf-lb-list'],
];

/** The listing's form, from its header (or a row that says it; the maps dump and JSON by their
 * first line). */
export function ciliumForm(text: string): CiliumForm | undefined {
  // what a listing is shows in its first lines: a big one is not scanned whole
  const head = text.slice(0, 16384);
  if (/^\s*(?:\[\s*)?\{\s*"spec"/m.test(head) || /^\s*\[\s*\]\s*$/.test(text))
    return 'service-list-json';
  // `bpf lb list -o json`: the table's map, each Service key to its entries as the table prints them
  if (BPF_JSON.test(head)) return 'bpf-lb-list';
  const lines = head.split('\n').map((l) => l.trim());
  for (const t of lines) {
    if (/^(?:AFF|BE|MAGLEV|REV|SRCRANGE|SVC): ID=\d+ /.test(t)) return 'maps-dump';
    const form = HEADERS.find(([re]) => re.test(t))?.[1];
    if (form) return form;
  }
  for (const t of lines) {
    const form = ROWS.find(([re]) => re.test(t))?.[1];
    if (form) return form;
  }
  return undefined;
}

/** A listing pasted as shell comments (each line of the output after "# ", as notes keep a
 * command's output under it): the text with that mark taken off each line, where a listing is
 * found only so; undefined otherwise. */
export function uncommented(text: string): string | undefined {
  if (!/^#/m.test(text) || ciliumForm(text)) return undefined;
  const out = text
    .split('\n')
    .map((l) => (l.trimEnd() === '#' ? '' : l.startsWith('# ') ? l.slice(2) : l))
    .join('\n');
  return ciliumForm(out) ? out : undefined;
}

/** One of the agent's listings, read. Throws CiliumParseError (FILE:LINE first) on a row that
 * does not read, or when no listing is found. */
export function parseCilium(coloured: string, source: string): CiliumTable {
  // grep --color's codes around each match: the listing is the text without them
  const text = stripColours(coloured);
  const table = parseListing(text, source);
  if (table.unreadFrom === undefined) return table;
  // another listing follows under its own command (a paste of two): read it too, at its lines
  const rest = text
    .split('\n')
    .map((l, i) => (i < table.unreadFrom! - 1 ? '' : l))
    .join('\n');
  let next: CiliumTable;
  try {
    next = parseCilium(rest, source);
  } catch (e) {
    if (e instanceof CiliumParseError) return table; // not a listing: said as not read
    throw e;
  }
  const { unreadFrom: _read, ...first } = table;
  return joined(first, next);
}

/** Two listings of one agent in one paste: each frontend once, what the second adds (its type,
 * backends the first does not list) filled in. */
function joined(a: CiliumTable, b: CiliumTable): CiliumTable {
  const byKey = new Map(
    a.frontends.map((f) => [
      frontendKey(f),
      { ...f, flags: [...f.flags], backends: [...f.backends] },
    ]),
  );
  for (const f of b.frontends) {
    const known = byKey.get(frontendKey(f));
    if (!known) {
      byKey.set(frontendKey(f), f);
      continue;
    }
    known.type ??= f.type;
    // the BPF map's flags (Local, non-routable ...) are kept with the frontend they belong to
    if (known.flags.length === 0 && f.flags.length > 0) known.flagsLine = f.line;
    for (const flag of f.flags) if (!known.flags.includes(flag)) known.flags.push(flag);
    for (const be of f.backends)
      if (!known.backends.some((x) => x.ip === be.ip && x.port === be.port))
        known.backends.push(be);
  }
  const cut = [...(a.cut ?? []), ...(b.cut ?? [])];
  return {
    ...a,
    frontends: [...byKey.values()],
    ...(cut.length > 0 ? { cut } : {}),
    ...(b.unreadFrom !== undefined ? { unreadFrom: b.unreadFrom } : {}),
  };
}

/** One listing: the first the text holds; where the agent's CLI said it could not print some
 * entries, the listing is said to lack them. */
function parseListing(text: string, source: string): CiliumTable {
  const plain = text.replace(/\r/g, '');
  const quiet = withoutKubectlNoise(uncommented(plain) ?? plain);
  const { text: clean, first } = withoutAgentErrors(quiet.text);
  const table = parseForm(clean, source);
  const cut: CiliumCut[] = [];
  if (first) {
    const more = first.count > 1 ? ` and ${first.count - 1} more such errors` : '';
    cut.push({
      line: first.line,
      reason: `Cilium's CLI printed "${excerpt(first.what)}"${more}: the entries it could not parse are not in its listing`,
    });
  }
  // kubectl's word that the command failed in the Pod, where it comes after the listing's start
  const failed = quiet.failed;
  if (
    failed &&
    failed.line > (table.frontends[0]?.line ?? 0) &&
    failed.line < (table.unreadFrom ?? Infinity)
  )
    cut.push({
      line: failed.line,
      reason: `kubectl said "command terminated with exit code ${failed.code}": what the command printed may not be all of its listing`,
    });
  return cut.length === 0 ? table : { ...table, cut: [...(table.cut ?? []), ...cut] };
}

function parseForm(text: string, source: string): CiliumTable {
  const form = ciliumForm(text);
  const lines = text.split('\n');
  switch (form) {
    case 'service-list-json':
      return serviceListJson(text, source);
    case 'service-list':
      return serviceList(lines, source);
    case 'bpf-lb-list':
      return BPF_JSON.test(text.slice(0, 16384))
        ? bpfLbJson(text, source)
        : bpfLbList(lines, source);
    case 'db-frontends':
      return dbFrontends(lines, source);
    case 'db-backends':
      return { form, source, frontends: [], ...dbBackends(lines, source) };
    case 'maps-dump':
      return mapsDump(lines, source);
    default: {
      const other = ciliumOther(text);
      throw new CiliumParseError(
        source,
        other?.line,
        other?.message ??
          'not a Cilium listing (cilium-dbg service list, bpf lb list, db/show frontends)',
      );
    }
  }
}

/** The fields `cilium-dbg status` prints at the start of its lines (FormatStatusResponse). */
const STATUS_FIELDS =
  /^[ \t]*(KVStore|Kubernetes|Kubernetes APIs|KubeProxyReplacement|KubeProxyReplacement Details|Host firewall|CNI Chaining|NodeMonitor|Cilium health daemon|IPAM|BandwidthManager|Host Routing|Masquerading|Controller Status|Proxy Status|Global Identity Range|Hubble|Encryption|Cluster health):/gm;

/** Output of Cilium's tools that holds no frontend or backend, by what prints it, with what to say
 * of it (one line) and the line where it starts: the Services table, the agent's status,
 * cilium-cli's status, a YAML dump. */
export function ciliumOther(
  text: string,
): { what: string; message: string; line: number } | undefined {
  const head = text.slice(0, 16384);
  const lineAt = (index: number) => head.slice(0, index).split('\n').length;
  const services = /^\s*Name\s+Source\s+(?:PortNames|NatPolicy|TrafficPolicy)\b/m.exec(head);
  if (services)
    return {
      what: 'db/show services',
      message:
        "Cilium's Services table (db/show services) holds each Service's policies, not its frontends or backends: give kdebug db/show frontends and db/show backends",
      line: lineAt(services.index + services[0].search(/\S/)),
    };
  const fields = [...head.matchAll(STATUS_FIELDS)];
  if (new Set(fields.map((m) => m[1])).size >= 2)
    return {
      what: 'cilium-dbg status',
      message:
        "this is the agent's `cilium-dbg status` (its state and settings): it lists no Service, frontend or backend; give kdebug `cilium-dbg service list`, `cilium-dbg bpf lb list` or `cilium-dbg shell -- db/show frontends` from the same agent",
      line: lineAt(fields[0]!.index),
    };
  const cli = /^[ \t]*Cilium:[ \t]+(?:OK|\d+ errors)/m.exec(head);
  const operator = /^[ \t]*(?:\S+[ \t]+)?Operator:[ \t]/m.exec(head);
  if (cli && operator)
    return {
      what: 'cilium status',
      message:
        "this is cilium-cli's `cilium status` (the installation's health, counted over the cluster): it lists no Service, frontend or backend; give kdebug `cilium-dbg service list` (or `cilium-dbg bpf lb list`) from a Cilium agent Pod",
      line: lineAt(Math.min(cli.index, operator.index)),
    };
  // the REST model as YAML: sigs.k8s.io/yaml keeps the JSON names, go-yaml lowercases the fields
  const yaml = /^[ \t]*(?:- )?(?:backend-?addresses|frontend-?address):/im.exec(head);
  if (yaml)
    return {
      what: 'service list -o yaml',
      message:
        'this is `cilium-dbg service list -o yaml`, which kdebug does not read: give it `cilium-dbg service list` or `cilium-dbg service list -o json`',
      line: lineAt(yamlStart(head, yaml.index)),
    };
  return undefined;
}

/** Where the YAML document holding the line at `index` starts: the first line of the run of
 * YAML lines (a key, a list item, their indented lines) above it. */
function yamlStart(text: string, index: number): number {
  const lines = text.slice(0, index).split('\n');
  let k = lines.length - 1; // the line of the field, its text before the field
  while (k > 0 && /^(?:[ \t]*(?:- )?[\w.-]+:(?:[ \t]|$)|[ \t]+\S|---$)/.test(lines[k - 1]!)) k--;
  return lines.slice(0, k).reduce((n, l) => n + l.length + 1, 0);
}

const fail = (source: string, line: number, why: string): never => {
  throw new CiliumParseError(source, line, why);
};

/** The line where the listing's header is (the line before its first row where it has none),
 * and the column it starts at. */
function headerAt(lines: string[], form: CiliumForm): { index: number; column: number } {
  let index = lines.findIndex((l) => HEADERS.some(([re, f]) => f === form && re.test(l.trim())));
  if (index < 0) {
    index = lines.findIndex((l) => ROWS.some(([re, f]) => f === form && re.test(l.trim()))) - 1;
    // rows that do not say the form may come first (a grep's context): back to what ends it
    while (index >= 0 && lines[index]!.trim() !== '' && !endsListing(lines[index]!.trim())) index--;
  }
  if (index < 0) return { index: -1, column: 0 };
  const line = lines[index]!;
  return { index, column: line.length - line.trimStart().length };
}

/** A line that ends the listing: a shell prompt ("root@node:~# ", "[user@host dir]$ ", one
 * alone at the end of a line as a trimmed paste leaves it), a new command (with or without a
 * prompt, as documentation writes it; through an alias of kubectl or docker, "k exec ... --
 * cilium-dbg service list | grep X"), a code fence. */
const ENDS =
  /^(?:\S*[#$%>](?: |$)|\[[^\]]*\][#$%>](?: |$)|```|~~~|Exitcode:|Stderr:|cmd: |(?:sudo\s+)?(?:kubectl|cilium|cilium-dbg)\s|\S+\s.*\s(?:cilium|cilium-dbg)\s+(?:service|bpf|shell|status|statedb|map)\b)/;

/** A line that ends the listing and is no elision ("# --- snip ---" and "<omitted>" read as a
 * prompt). */
const endsListing = (t: string) => ENDS.test(t) && !ELISION.test(t);

/** Where another command's output starts after a listing: at `k` where rows follow, so that it is
 * read in turn (or said not read), never dropped. */
const followedByRows = (lines: string[], k: number) =>
  lines.slice(k + 1).some((l) => /^\s*\d/.test(l)) ? k + 1 : undefined;

/** Whether a row follows line `k` before another listing starts (a prompt, a command, a header). */
function rowsBelow(lines: string[], k: number): boolean {
  for (const l of lines.slice(k + 1)) {
    const t = l.trim();
    if (endsListing(t) || HEADERS.some(([re]) => re.test(t))) return false;
    if (/^\d/.test(t)) return true;
  }
  return false;
}

/** Rows the author left out at `line`, quoted as marked. */
const leftOut = (line: number, mark: string): CiliumCut => ({
  line,
  reason: `rows left out ("${mark}")`,
});

/** Calls `row` with each of the listing's rows after its header, trimmed, with its line number,
 * up to what ends it (a prompt, a fence, or `row` returning false); marked elided where the
 * author left rows out. Returns where the first elision is, the line of a new command whose
 * output follows (that is another listing, not read with this one), and where `row` stopped at a
 * line with rows after it (those not read). */
function eachRow(
  lines: string[],
  index: number,
  row: (r: { t: string; at: number; elided: boolean }) => boolean | void,
): { cut?: CiliumCut; unreadFrom?: number; stopped?: CiliumCut } {
  let cut: CiliumCut | undefined;
  // rows left out before the first one read, its header with them: the listing is not whole
  const headed = index >= 0 && HEADERS.some(([re]) => re.test(lines[index]!.trim()));
  for (let k = index; !headed && k >= 0 && !endsListing(lines[k]!.trim()); k--)
    if (ELISION.test(lines[k]!.trim())) cut ??= leftOut(k + 1, lines[k]!.trim());
  for (let k = index + 1; k < lines.length; k++) {
    const t = lines[k]!.trim();
    if (t === '') continue;
    // most rows start with an address: no prompt, fence or elision starts with a digit
    const plain = t.charCodeAt(0) >= 48 && t.charCodeAt(0) <= 57;
    const elided = !plain && ELISION.test(t);
    if (!plain && !elided && ENDS.test(t)) {
      const unreadFrom = followedByRows(lines, k);
      return { ...(cut ? { cut } : {}), ...(unreadFrom ? { unreadFrom } : {}) };
    }
    if (elided) cut ??= leftOut(k + 1, t);
    if (row({ t, at: k + 1, elided }) === false) {
      // rows of the listing below a line that is none ("(output truncated)", a note): said unread
      if (!rowsBelow(lines, k)) break;
      const stopped = {
        line: k + 1,
        reason: `lines from here not read ("${excerpt(t)}" is no row of the listing, and rows follow it)`,
      };
      return { ...(cut ? { cut } : {}), stopped };
    }
  }
  return cut ? { cut } : {};
}

/** `cilium-dbg service list`: "ID  Frontend  Service Type  Backend", each backend "N => ADDR
 * (state)", further backends on lines of their own. */
function serviceList(lines: string[], source: string): CiliumTable {
  const { index } = headerAt(lines, 'service-list');
  const frontends: CiliumFrontend[] = [];
  let current: CiliumFrontend | undefined;
  let elided = false;
  const beyond = index >= 0 ? beyondBackend(lines[index]!) : undefined;
  const { cut, unreadFrom, stopped } = eachRow(lines, index, (row) => {
    const { at } = row;
    if (row.elided) {
      // its backends may go on past the elision, on the lines left out
      if (current) current.backendsElided ??= at;
      elided = true;
      current = undefined;
      return;
    }
    // columns the header has after Backend are not read: each row is cut where they start
    const t = beyond === undefined ? row.t : beforeColumn(lines[at - 1]!, beyond);
    if (t === '') return;
    const be = /^(\d+) => (\S+)(.*)$/.exec(t);
    if (be) {
      if (!current && elided) return; // the rest of a frontend the author left out
      if (!current) fail(source, at, 'a backend before any frontend');
      current!.backends.push(backendCell(be[2]!, be[3]!, at, source));
      return;
    }
    const m =
      /^(?:(\d+)\s+)?(\S+?)(?: =>)?(?:\s+([A-Za-z]+(?: \(Remote\))?))?(?:\s+(\d+) => (\S+)(.*))?$/.exec(
        t,
      );
    const addr = m && parseAddress(m[2]!);
    if (!m || !addr) {
      if (frontends.length > 0 && !/\d/.test(t)) return false; // prose after the listing
      fail(source, at, `not a row of cilium service list: "${t.slice(0, 80)}"`);
    }
    current = {
      ...addr!,
      type: frontendType(m![3]?.replace(' (Remote)', '')),
      flags: m![3]?.endsWith('(Remote)') ? ['remote'] : [],
      backends: [],
      line: at,
    };
    if (m![5]) current.backends.push(backendCell(m![5], m![6]!, at, source));
    frontends.push(current);
  });
  // its backends may go on in the rows not read
  if (stopped && current) current.backendsElided ??= stopped.line;
  const cuts = [cut, stopped].filter((c) => c !== undefined);
  return {
    form: 'service-list',
    source,
    frontends: merged(frontends),
    ...(cuts.length > 0 ? { cut: cuts } : {}),
    ...(unreadFrom ? { unreadFrom } : {}),
  };
}

/** Where the header's first column after Backend starts (tabs expanded), if it has one: a
 * build that prints more than ID, Frontend, Service Type and Backend ("Source Ranges"). */
function beyondBackend(header: string): number | undefined {
  const wide = expandTabs(header);
  const backend = /\bBackend\b/.exec(wide);
  if (!backend) return undefined;
  const next = /\S/.exec(wide.slice(backend.index + 'Backend'.length));
  return next ? backend.index + 'Backend'.length + next.index : undefined;
}

/** A row's text up to the column at `at` (tabs expanded, as a tabwriter's columns line up),
 * trimmed; the whole row where nothing starts there after a space (a row out of line). */
function beforeColumn(line: string, at: number): string {
  const wide = expandTabs(line);
  return (wide.length > at && wide[at - 1] === ' ' ? wide.slice(0, at) : wide).trim();
}

/** Tabs to the next multiple of 8, as a terminal shows them. */
function expandTabs(line: string): string {
  if (!line.includes('\t')) return line;
  let out = '';
  for (const c of line) out += c === '\t' ? ' '.repeat(8 - (out.length % 8)) : c;
  return out;
}

/** "10.244.1.69:53/TCP" then " (active)", " (active) (preferred)", or nothing (old releases). */
function backendCell(address: string, rest: string, line: number, source: string): CiliumBackend {
  const a = parseAddress(address) ?? fail(source, line, `not a backend address: "${address}"`);
  const words = [...rest.matchAll(/\(([^)]*)\)/g)].map((w) => w[1]!);
  const state = words.map(backendState).find((s) => s !== undefined);
  return {
    ip: a.ip,
    port: a.port,
    ...(a.protocol ? { protocol: a.protocol } : {}),
    ...(state ? { state } : {}),
    ...(words.includes('preferred') ? { preferred: true } : {}),
    line,
  };
}

interface JsonBackend {
  ip?: string;
  port?: number;
  protocol?: string;
  state?: string;
  weight?: number;
  nodeName?: string;
  preferred?: boolean;
}
interface JsonSpec {
  id?: number;
  'frontend-address'?: { ip?: string; port?: number; protocol?: string; scope?: string };
  'backend-addresses'?: JsonBackend[];
  flags?: { type?: string; name?: string; namespace?: string };
}

/** A line that opens a JSON value at its start: a "{" or "[" alone (as Go's MarshalIndent puts
 * it), or followed by what JSON puts there. */
const JSON_OPENER = /^[ \t]*(?:\{[ \t]*(?:"|\}|$)|\[[ \t]*(?:[{"\]\d-]|true|false|null|$))/gm;
const LONE_OPENER = /^[ \t]*[[{][ \t]*$/;

/** The JSON value the text holds that `fits` takes, with the line it starts at: tried from each
 * line that opens one, those where the bracket is alone on its line (as the CLI prints it) first,
 * so that a shell's "[1]+  Done" or a "[2024-...]" log line before it is not taken for it; where
 * none parses so, why the first such line does not. */
function jsonValue(
  text: string,
  fits: (value: unknown) => boolean,
): { value: unknown; line: number } | { error: string; line: number } {
  const lineOf = (at: number) => text.slice(0, at).split('\n').length;
  const openers = [...text.matchAll(JSON_OPENER)].map((m) => m.index + m[0].search(/[[{]/));
  const lone = (at: number) => {
    const end = text.indexOf('\n', at);
    return LONE_OPENER.test(text.slice(text.lastIndexOf('\n', at) + 1, end < 0 ? undefined : end));
  };
  const ordered = [...openers.filter(lone), ...openers.filter((at) => !lone(at))];
  let first: { error: string; line: number } | undefined;
  // the spans tried: a value inside one that does not parse (cut) is a part of it, not the listing
  const tried: [number, number][] = [];
  for (const start of ordered.length > 0 ? ordered : [0]) {
    if (tried.some(([from, to]) => start > from && start < to)) continue;
    const end = closingBracket(text, start);
    tried.push([start, end < 0 ? text.length : end]);
    try {
      const value: unknown = JSON.parse(end < 0 ? text.slice(start) : text.slice(start, end + 1));
      if (fits(value)) return { value, line: lineOf(start) };
      first ??= { error: 'not the JSON this listing prints', line: lineOf(start) };
    } catch (e) {
      first ??= { error: (e as Error).message, line: lineOf(start) };
    }
  }
  return first!;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `cilium-dbg service list -o json`: the agent's API objects, realized state first. */
function serviceListJson(text: string, source: string): CiliumTable {
  type Item = { spec?: JsonSpec; status?: { realized?: JsonSpec } };
  // `service get -o json` prints one object, `service list -o json` a list; a prompt may come
  // before it ("[root@host ~]# ...", itself starting with a bracket) and after it
  // the REST model's objects: a spec (or a status's realized one) with its address or its id
  const model = (s: unknown) => isRecord(s) && ('frontend-address' in s || 'id' in s);
  const service = (v: unknown) =>
    isRecord(v) && (model(v['spec']) || (isRecord(v['status']) && model(v['status']['realized'])));
  const json = jsonValue(text, (v) => service(v) || (Array.isArray(v) && v.every(service)));
  if ('error' in json)
    throw new CiliumParseError(
      source,
      json.line,
      `not the JSON of cilium-dbg service list -o json: ${json.error}`,
    );
  const items = (Array.isArray(json.value) ? json.value : [json.value]) as Item[];
  const line = json.line;
  const frontends = items.map((item, i): CiliumFrontend => {
    const spec = item.status?.realized ?? item.spec ?? {};
    const fe = spec['frontend-address'] ?? {};
    const flags = item.spec?.flags ?? spec.flags ?? {};
    if (!fe.ip)
      fail(source, line, `Service ${i + 1} of service list -o json has no frontend address`);
    const protocol = fe.protocol?.toLowerCase();
    const backends = spec['backend-addresses'] ?? [];
    return {
      ip: fe.ip!,
      port: fe.port ?? 0,
      ...(protocol && protocol !== 'none'
        ? { protocol: protocol as CiliumFrontend['protocol'] }
        : {}),
      type: frontendType(flags.type),
      ...(flags.name ? { service: `${flags.namespace ?? ''}/${flags.name}` } : {}),
      // the REST model's scope is "external" or "internal" (models.FrontendAddressScope*)
      ...(fe.scope === 'internal' || fe.scope === 'i' ? { internal: true } : {}),
      flags: [],
      backends: backends.map((b) => ({
        ip: b.ip ?? '',
        port: b.port ?? 0,
        ...(b.protocol ? { protocol: b.protocol.toLowerCase() as CiliumBackend['protocol'] } : {}),
        ...(backendState(b.state) ? { state: backendState(b.state) } : {}),
        ...(b.weight !== undefined ? { weight: b.weight } : {}),
        ...(b.nodeName ? { nodeName: b.nodeName } : {}),
        ...(b.preferred ? { preferred: true } : {}),
        line,
      })),
      line,
    };
  });
  return { form: 'service-list-json', source, frontends };
}

/** The first key of `bpf lb list -o json` and the start of its first entry: a Service address
 * (with its slot from 1.15.4), then a list whose strings are the table's second column. */
const BPF_JSON =
  /^[ \t]*\{\s*"(?:\[[0-9a-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):\d+[^"]*":\s*\[\s*"(?:(?:\[[0-9a-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):\d+|backend \d+ not found)/m;

/** `bpf lb list -o json`: the table's map (the command prints the same map either way:
 * TablePrinter the key and its entries, PrintOutput the map), each Service key to its entries,
 * each entry read as the table's row is, at the line its string is on. */
function bpfLbJson(text: string, source: string): CiliumTable {
  const json = jsonValue(
    text,
    (v) => isRecord(v) && Object.values(v).every((e) => Array.isArray(e)),
  );
  if ('error' in json)
    throw new CiliumParseError(
      source,
      json.line,
      `not the JSON of cilium-dbg bpf lb list -o json: ${json.error}`,
    );
  const rows = bpfRows(source);
  const lineOf = linesOnward(text);
  // each key and string, in the order JSON writes them, found from where the last one was
  let at = text.indexOf(
    '{',
    text
      .split('\n')
      .slice(0, json.line - 1)
      .join('\n').length,
  );
  for (const [key, entries] of Object.entries(json.value as Record<string, unknown[]>)) {
    const found = text.indexOf(JSON.stringify(key), at);
    at = found >= 0 ? found : at;
    for (const entry of entries) {
      const line = lineOf(at);
      if (typeof entry !== 'string')
        fail(source, line, `not an entry of bpf lb list -o json under "${key}"`);
      // an entry written otherwise than JSON.stringify would (Go escapes "<", ">", "&"): at the
      // line of the last one found
      const next = text.indexOf(JSON.stringify(entry), at + 1);
      at = next >= 0 ? next : at;
      const [first, rest] = firstWord(entry as string);
      if (!rows.row(key.split(/\s+/)[0]!, first, rest, lineOf(at)))
        fail(
          source,
          lineOf(at),
          `not an entry of bpf lb list -o json: "${key}": "${entry as string}"`,
        );
    }
  }
  return { form: 'bpf-lb-list', source, frontends: [...rows.byKey.values()] };
}

/** The line of each position of `text` asked, counting its newlines on from the last position
 * asked (from the start again only where one is before it): the entries of a big JSON listing
 * are asked in order, and counting from the start for each made reading it quadratic. */
function linesOnward(text: string): (at: number) => number {
  let from = 0;
  let line = 1;
  return (at) => {
    if (at < from) [from, line] = [0, 1];
    for (let i = text.indexOf('\n', from); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
    from = at;
    return line;
  };
}

/** An entry's first word, and the rest from the space after it. */
function firstWord(entry: string): [string, string] {
  const space = entry.search(/\s/);
  return space < 0 ? [entry, ''] : [entry.slice(0, space), entry.slice(space)];
}

/** The Services of `bpf lb list` as its rows are read, table or JSON: `row` takes a row's
 * Service column (its address) and its entry, as its first word and the rest ("ADDR", " (revnat)
 * (slot) [flags]"; or "backend", " N not found"), and gives the frontend it is of, undefined
 * where the two are no such row. */
function bpfRows(source: string) {
  const byKey = new Map<string, CiliumFrontend>();
  // newer releases print the Service address on every row: each is parsed once
  const byToken = new Map<string, CiliumFrontend>();
  const withServiceRow = new Set<CiliumFrontend>();
  const row = (
    service: string,
    first: string,
    rest: string,
    at: number,
  ): CiliumFrontend | undefined => {
    let fe = byToken.get(service);
    if (!fe) {
      const a = parseAddress(service);
      if (!a || (first !== 'backend' && parseAddress(first) === undefined)) return undefined;
      const key = frontendKey(a);
      fe = byKey.get(key);
      if (!fe) {
        // field by field, not `...a`: that spread cost a fifth of a big listing's parse
        fe = { ip: a.ip, port: a.port, flags: [], backends: [], line: at };
        if (a.protocol) fe.protocol = a.protocol;
        if (a.internal) fe.internal = true;
        byKey.set(key, fe);
      }
      byToken.set(service, fe);
    }
    slot(fe, first, rest, at);
    return fe;
  };

  /** One map slot: "ADDR (revnat) (slot) [flags]", or "backend N not found". */
  function slot(fe: CiliumFrontend, entry: string, rest: string, at: number): void {
    if (entry === 'backend') {
      fe.flags.push(`backend${rest.replace(/ not found.*$/, '')} not found`);
      return;
    }
    const a = parseAddress(entry) ?? fail(source, at, `not an address: "${entry}"`);
    const bracket = rest.includes('[') ? /\[([^\]]*)\]/.exec(rest)?.[1] : undefined;
    if (a.port === 0 && (a.ip === '0.0.0.0' || a.ip === '::')) {
      withServiceRow.add(fe);
      // the Service entry: its flags name the frontend's type
      const flags = bracket?.split(/,\s*/) ?? [];
      fe.type ??= flags.map(frontendType).find((f) => f !== undefined);
      fe.flags.push(...flags.filter((f) => !frontendType(f) && !fe.flags.includes(f)));
      return;
    }
    const state = backendState(bracket);
    // its protocol in the literal: a field added after it costs each backend a second allocation
    const backend: CiliumBackend = a.protocol
      ? { ip: a.ip, port: a.port, line: at, protocol: a.protocol }
      : { ip: a.ip, port: a.port, line: at };
    if (state) backend.state = state;
    fe.backends.push(backend);
  }
  return { byKey, row, slot, withServiceRow };
}

/** `cilium-dbg bpf lb list`: a row per Service map entry. Slot 0 ("0.0.0.0:0 (revnat) (0)
 * [flags]") is the Service itself; the other slots name its backends. Older releases print the
 * Service address once, newer ones on every row with its slot. */
function bpfLbList(lines: string[], source: string): CiliumTable {
  const { index } = headerAt(lines, 'bpf-lb-list');
  const rows = bpfRows(source);
  let current: CiliumFrontend | undefined;
  let headless: CiliumCut | undefined;
  let elided = false;
  const { cut, unreadFrom, stopped } = eachRow(lines, index, (row) => {
    const { t, at } = row;
    if (row.elided) {
      // its backends may go on past the elision, on the lines left out
      if (current) current.backendsElided ??= at;
      elided = true;
      current = undefined;
      return;
    }
    // "SERVICE [(slot)] ENTRY REST": a row of a Service; else the next entry of the one above
    const m = /^(\S+)(?:\s+\(\d+\))?\s+(\S+)(.*)$/.exec(t);
    const fe = m ? rows.row(m[1]!, m[2]!, m[3]!, at) : undefined;
    if (fe) {
      current = fe;
      return;
    }
    const first = m ? parseAddress(m[1]!) : parseAddress(t);
    if ((first || /^backend \d+ not found/.test(t)) && current) {
      const [entry, ...rest] = t.split(/\s+/);
      return rows.slot(current, entry!, ` ${rest.join(' ')}`, at);
    }
    // a backend row of a Service whose own rows are not in the paste (a grep's context)
    if (first && !current && rows.byKey.size === 0) {
      headless ??= { line: at, reason: 'rows of a Service whose first row is not in the paste' };
      return;
    }
    if (first && !current && elided) return; // the rest of a Service the author left out
    if (rows.byKey.size > 0 && !/\d/.test(t)) return false;
    fail(source, at, `not a row of cilium bpf lb list: "${t.slice(0, 80)}"`);
  });
  // its backends may go on in the rows not read
  if (stopped && current) current.backendsElided ??= stopped.line;
  const cuts = [cut ?? headless, stopped].filter((c) => c !== undefined);
  // every Service has its slot 0 row: where it is not in the paste, its other rows may not be all
  for (const fe of rows.byKey.values())
    if (!rows.withServiceRow.has(fe)) fe.serviceRowUnseen = true;
  return {
    form: 'bpf-lb-list',
    source,
    frontends: [...rows.byKey.values()],
    ...(cuts.length > 0 ? { cut: cuts } : {}),
    ...(unreadFrom ? { unreadFrom } : {}),
  };
}

/** The columns of a load-balancer table, from its header: each cell starts where its title does. */
function columns(header: string): { name: string; start: number }[] {
  return [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0].toLowerCase(), start: m.index }));
}

function cells(line: string, cols: { name: string; start: number }[]): Map<string, string> {
  const out = new Map<string, string>();
  // a row out of line with its header (hand-made, re-indented) splits on runs of spaces
  const aligned = cols.every(
    (c) => c.start === 0 || line[c.start - 1] === ' ' || line[c.start - 1] === undefined,
  );
  const parts = aligned
    ? cols.map((c, i) => line.slice(c.start, cols[i + 1]?.start ?? line.length))
    : line.trim().split(/\s{2,}|\t+/);
  cols.forEach((c, i) => out.set(c.name, (parts[i] ?? '').trim()));
  return out;
}

/** `db/show frontends` (Cilium 1.17+): Address, Type, ServiceName, PortName, Status, Backends,
 * in the order the release prints them. */
function dbFrontends(lines: string[], source: string): CiliumTable {
  const { index, column } = headerAt(lines, 'db-frontends');
  const cols = columns(lines[index]!.slice(column));
  const frontends: CiliumFrontend[] = [];
  let cut: CiliumCut | undefined;
  let unreadFrom: number | undefined;
  for (let k = index + 1; k < lines.length; k++) {
    const raw = lines[k]!.slice(column);
    const t = raw.trim();
    if (t === '') continue;
    if (endsListing(t) || HEADERS.some(([re]) => re.test(t))) {
      unreadFrom = followedByRows(lines, k);
      break;
    }
    const at = k + 1;
    if (ELISION.test(t)) {
      cut ??= leftOut(at, t);
      continue;
    }
    const row = cells(raw, cols);
    const addr =
      parseAddress(row.get('address') ?? '') ??
      fail(source, at, `not a frontend address: "${row.get('address')}"`);
    const cell = row.get('backends') ?? '';
    // the table shows the first few and "+ N more ...": the rest is not in the listing
    const more = /\+ (\d+) more/.exec(cell);
    const backends = cell
      .replace(/\s*\+ \d+ more.*$/, '')
      .split(/,\s*/)
      .filter((b) => b !== '')
      .map((b): CiliumBackend => {
        const [address, ...rest] = b.split(/\s+/);
        return backendCell(address!, rest.join(' '), at, source);
      });
    const status = row.get('status');
    frontends.push({
      ...addr,
      type: frontendType(row.get('type')),
      ...(row.get('servicename') ? { service: row.get('servicename') } : {}),
      ...(row.get('portname') ? { portName: row.get('portname') } : {}),
      ...(status ? { status } : {}),
      flags: [],
      backends,
      ...(more ? { backendsNotShown: Number(more[1]) } : {}),
      ...(cols.some((c) => c.name === 'backends') ? {} : { backendsUnread: true as const }),
      line: at,
    });
  }
  return {
    form: 'db-frontends',
    source,
    frontends,
    ...(cut ? { cut: [cut] } : {}),
    ...(unreadFrom ? { unreadFrom } : {}),
  };
}

/** `db/show backends`: each backend's state, from its Instances ("ns/name [terminating] (port)")
 * or, in later releases, its own State column; where rows are left out, the first elision. */
function dbBackends(
  lines: string[],
  source: string,
): { backendStates: Map<string, BackendState>; cut?: CiliumCut[] } {
  const { index, column } = headerAt(lines, 'db-backends');
  const cols = columns(lines[index]!.slice(column));
  const states = new Map<string, BackendState>();
  let cut: CiliumCut | undefined;
  for (let k = index + 1; k < lines.length; k++) {
    const raw = lines[k]!.slice(column);
    const t = raw.trim();
    if (t === '') continue;
    if (endsListing(t) || HEADERS.some(([re]) => re.test(t))) break;
    if (ELISION.test(t)) {
      cut ??= leftOut(k + 1, t);
      continue;
    }
    const row = cells(raw, cols);
    const a =
      parseAddress(row.get('address') ?? '') ??
      fail(source, k + 1, `not a backend address: "${row.get('address')}"`);
    const marked = /\[([^\]]+)\]/.exec(row.get('instances') ?? '')?.[1];
    const state = backendState(row.get('state')) ?? backendState(marked) ?? 'active';
    states.set(formatAddress(a), state);
  }
  return { backendStates: states, ...(cut ? { cut: [cut] } : {}) };
}

/** One frontend listed twice (a paste holding the listing twice) is one frontend. */
function merged(frontends: CiliumFrontend[]): CiliumFrontend[] {
  const byKey = new Map<string, CiliumFrontend>();
  for (const f of frontends) if (!byKey.has(frontendKey(f))) byKey.set(frontendKey(f), f);
  return [...byKey.values()];
}

/** The frontends table with each backend's state from the backends table (kept with it: the
 * states were read, however few). */
export function withBackendStates(
  frontends: CiliumTable,
  states: Map<string, BackendState>,
): CiliumTable {
  return {
    ...frontends,
    backendStates: states,
    frontends: frontends.frontends.map((f) => ({
      ...f,
      backends: f.backends.map((b) => {
        const state = states.get(formatAddress({ ...b, protocol: b.protocol ?? f.protocol }));
        return state ? { ...b, state } : b;
      }),
    })),
  };
}
