// The list screens, as k9s has them: `:svc` lists the Services (namespace, name, type, cluster
// IP, ports, the mark of their last diagnosis in this session), `:ns` the namespaces; `/` filters
// either, enter diagnoses a Service or shows a namespace's Services.
import type { Service } from '../../core/kube/objects.js';
import type { Shown } from '../../core/model.js';
import { Mark } from '../components/mark.js';
import { Pane, innerLines } from '../components/pane.js';
import { T } from '../components/text.js';
import { useWindow } from '../components/window.js';
import { cursorOf, type State, type View } from '../state.js';

export interface ServiceRow {
  namespace: string;
  name: string;
  type: string;
  clusterIP: string;
  ports: string;
  /** Its last diagnosis in this session, where there was one. */
  mark?: Shown;
}

export interface ListModel<R> {
  rows: R[];
  cursor: number;
  /** What the list is filtered by: the query being typed, else the one kept. */
  filter: string;
  /** The query as typed while `/` is open: its prompt shows from the first keystroke. */
  typing?: string;
  width: number;
  height: number;
}

/** The filter a list screen shows: what `/` is typing, else what enter kept. */
const filterOf = (s: State) =>
  (s.modal === 'search' ? s.query : (s.filter[s.screen] ?? '')).trim().toLowerCase();

const typingOf = (s: State) => (s.modal === 'search' ? { typing: s.query } : {});

/** The title line's right side: the `/` prompt being typed (else the kept filter), the count. */
const listInfo = (m: ListModel<unknown>, hint: string) =>
  [
    m.typing !== undefined ? `/${m.typing}▏` : m.filter ? `/${m.filter}` : '',
    `${m.rows.length}`,
    hint,
  ]
    .filter(Boolean)
    .join('  ');

const ports = (svc: Service) =>
  svc.ports.map((p) => `${p.name ? `${p.name}:` : ''}${p.port}/${p.protocol}`).join(',');

export function servicesModel(
  s: State,
  services: Service[],
  marks: ReadonlyMap<string, Shown>,
  width: number,
  height: number,
): ListModel<ServiceRow> {
  const filter = filterOf(s);
  const rows = services
    .filter((svc) => s.namespace === undefined || svc.namespace === s.namespace)
    .filter((svc) => `${svc.namespace}/${svc.name}`.toLowerCase().includes(filter))
    .map((svc) => ({
      namespace: svc.namespace,
      name: svc.name,
      type: svc.type,
      clusterIP: svc.headless ? 'None' : (svc.clusterIP ?? ''),
      ports: ports(svc),
      mark: marks.get(`${svc.namespace}/${svc.name}`),
    }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
  const cursor = Math.min(cursorOf(s, 'svc', 0), Math.max(0, rows.length - 1));
  return { rows, cursor, filter, ...typingOf(s), width, height };
}

/** The Namespaces list's first row: every namespace's Services. */
export const ALL = '(all)';

export function namespacesModel(
  s: State,
  services: Service[],
  width: number,
  height: number,
): ListModel<string> {
  const filter = filterOf(s);
  const rows = [
    ALL,
    ...[...new Set(services.map((svc) => svc.namespace))]
      .filter((ns) => ns.toLowerCase().includes(filter))
      .sort(),
  ];
  const cursor = Math.min(cursorOf(s, 'ns', 0), Math.max(0, rows.length - 1));
  return { rows, cursor, filter, ...typingOf(s), width, height };
}

export function listView(m: ListModel<unknown>): View {
  return { lists: [m.rows.length], page: innerLines(m.height) - 1 };
}

/** A line's columns cut or padded to their widths. */
const cols = (cells: string[], widths: number[]) =>
  cells
    .map((c, i) =>
      c.length > widths[i]! ? `${c.slice(0, widths[i]! - 1)}…` : c.padEnd(widths[i]!),
    )
    .join(' ');

/** The list's first columns: each as wide as its longest cell, up to its most. */
const COLUMNS = [
  ['namespace', 'NAMESPACE', 20],
  ['name', 'NAME', 32],
  ['type', 'TYPE', 12],
  ['clusterIP', 'CLUSTER-IP', 39],
] as const;

export function Services({
  model: m,
  namespace,
}: {
  model: ListModel<ServiceRow>;
  namespace?: string;
}) {
  const page = innerLines(m.height) - 1;
  const start = useWindow(m.cursor, m.rows.length, page);
  // namespace, name, type and cluster IP as wide as their longest (within reason), then the
  // ports take what is left
  const inner = m.width - 7;
  const longest = (cells: string[], title: string, max: number) =>
    Math.min(max, Math.max(title.length, ...cells.map((c) => c.length)));
  const all = COLUMNS.map(([key, title, max]) =>
    longest(
      m.rows.map((r) => r[key]),
      title,
      max,
    ),
  );
  // a narrow terminal keeps the name: ports, then cluster IP, then type go first
  let shown = 5;
  while (shown > 2 && all.slice(0, shown - 1).reduce((a, b) => a + b + 1, 0) + 8 > inner) shown--;
  const widths = all.slice(0, shown - 1);
  const left = Math.max(8, inner - widths.reduce((a, b) => a + b + 1, 0));
  const cells = (c: string[]) => cols(c.slice(0, shown), [...widths, left]);
  const title = `Services (${namespace ?? 'all namespaces'})`;
  const info = listInfo(m, 'enter diagnoses');
  return (
    <Pane title={title} info={info} focused width={m.width} height={m.height}>
      <T tone="muted">{`    ${cells(['NAMESPACE', 'NAME', 'TYPE', 'CLUSTER-IP', 'PORTS'])}`}</T>
      {m.rows.length === 0 ? (
        <T tone="muted">no Service{m.filter ? ` matches /${m.filter}` : ' recorded'}</T>
      ) : null}
      {m.rows.slice(start, start + page).map((r, i) => {
        const selected = start + i === m.cursor;
        return (
          <T key={`${r.namespace}/${r.name}`} selected={selected}>
            {selected ? '›' : ' '}
            {r.mark ? <Mark status={r.mark} tick={0} /> : ' '}
            {'  '}
            {cells([r.namespace, r.name, r.type, r.clusterIP, r.ports])}
          </T>
        );
      })}
    </Pane>
  );
}

export function Namespaces({ model: m }: { model: ListModel<string> }) {
  const page = innerLines(m.height) - 1;
  const start = useWindow(m.cursor, m.rows.length, page);
  const info = listInfo(m, 'enter: its Services');
  return (
    <Pane title="Namespaces" info={info} focused width={m.width} height={m.height}>
      <T tone="muted">{'  NAMESPACE'}</T>
      {m.rows.slice(start, start + page).map((ns, i) => {
        const selected = start + i === m.cursor;
        return (
          <T key={ns} selected={selected}>
            {selected ? '› ' : '  '}
            {ns}
          </T>
        );
      })}
    </Pane>
  );
}
