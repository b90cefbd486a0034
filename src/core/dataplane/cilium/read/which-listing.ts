// Which of the agent's listings a text holds: told by its header, or by a row that says it where
// the header was cut off (the maps dump and JSON by their first line); and, where it holds none,
// what other output of Cilium's tools it is, said by what prints it.
import type { CiliumForm } from './listing.js';
import { BPF_GO_MAP } from './listings/bpf-lb-go-map.js';

/** Each listing's header line, as the releases print it. */
export const HEADERS: [RegExp, CiliumForm][] = [
  [/^(?:ID\s+)?Frontend\s+(?:Service Type\s+)?Backend\b/, 'service-list'],
  [/^SERVICE ADDRESS\s+BACKEND ADDRESS\b/, 'bpf-lb-list'],
  // with every column, or those a script selects (Address and any of its own columns)
  [/^Address\s+(?:.*\s)?(?:Type|ServiceName|PortName|Backends|RedirectTo)(?:\s|$)/, 'db-frontends'],
  // 1.17, 1.18: a row per backend (Instances); 1.19 on: a row per Service and backend (its
  // State among the columns, or the two first alone where some columns are selected)
  [/^(?:Address\s+.*\bInstances\b|Instances\s+Address\b|Service\s+Address(?:\s|$))/, 'db-backends'],
];

/** Rows that say their listing where its header was cut off or grepped away. */
export const ROWS: [RegExp, CiliumForm][] = [
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
  // the Service's own entry on a row of its own under its address, as releases before 1.16 print
  // it where a backend's row comes first: "0.0.0.0:0 (76) [LoadBalancer]"
  [/^(?:0\.0\.0\.0|\[::\]):0 \(\d+\)(?: \(0\))? \[[^\]]*\]$/, 'bpf-lb-list'],
  // a backend's row (a grep for it): "SVC[/PROTO] [(slot)]  BACKEND[/PROTO] (revnat) (slot)"
  [/^\S+:\d+\S*(?: \(\d+\))?\s+\S+:\d+\S* \(\d+\) \(\d+\)$/, 'bpf-lb-list'],
];

/** The listing's form, from its header (or a row that says it; the maps dump and JSON by their
 * first line). */
export function ciliumForm(text: string): CiliumForm | undefined {
  // what a listing is shows in its first lines: a big one is not scanned whole (a line's start
  // takes only its own indentation: `^\s*` over every line start of blank lines is quadratic)
  const head = text.slice(0, 16384);
  if (/^[^\S\n\r\u2028\u2029]*(?:\[\s*)?\{\s*"spec"/m.test(head) || /^\s*\[\s*\]\s*$/.test(text))
    return 'service-list-json';
  // `bpf lb list -o json`: the table's map, each Service key to its entries as the table prints them
  if (BPF_JSON.test(head)) return 'bpf-lb-list';
  // the same map as cilium-cli's local-redirect-policy test prints it (Go's %+v), one line
  if (BPF_GO_MAP.test(head)) return 'bpf-lb-list';
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
  const services =
    /^[^\S\n\r\u2028\u2029]*Name\s+Source\s+(?:PortNames|NatPolicy|TrafficPolicy)\b/m.exec(head);
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

/** The first key of `bpf lb list -o json` and the start of its first entry: a Service address
 * (with its slot from 1.15.4), then a list whose strings are the table's second column. */
export const BPF_JSON =
  /^[ \t]*\{\s*"(?:\[[0-9a-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):\d+[^"]*":\s*\[\s*"(?:(?:\[[0-9a-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):\d+|backend \d+ not found)/m;
