// What a key does beyond moving a cursor: which screen Enter opens (a finding's drift or its
// rules, a search hit's chain), the ":" commands, quitting, reading again, answering a question.
// Pure: a key and the state in, the effects out; App.tsx runs them. Tested without Ink.
import type { TuiData } from './data.js';
import { completeCommand, parseCommand, type KeyAction } from './keymap.js';
import { LISTS, type Action, type State, type View } from './state.js';
import type { DiagnosedService } from '../core/diagnose.js';
import type { Service } from '../core/kube/objects.js';
import { isPortOf, type Shown } from '../core/model.js';
import { valid } from '../core/findings/next-command.js';
import { findService } from '../core/kube/service-ref.js';
import {
  ALL,
  listView,
  namespacesModel,
  servicesModel,
  type ListModel,
  type ServiceRow,
} from './screens/Services.js';
import { diagModel, diagView, type DiagModel } from './screens/Diagnosis.js';
import { driftFinding, driftModel, driftView, type DriftModel } from './screens/Drift.js';
import { helpLines, helpView } from './screens/Help.js';
import { errorsModel, errorsView, type ErrorsModel } from './screens/NodeErrors.js';
import { rulesModel, rulesView, type RulesModel } from './screens/Rules.js';
import { locate } from './screens/rules-rows.js';
import { searchModel, searchView, type SearchModel } from './screens/Search.js';
import { traceModel, traceView, type TraceModel } from './screens/Trace.js';

/** What each screen shows for a state. */
export interface Models {
  diag?: DiagModel;
  rules?: RulesModel;
  trace?: TraceModel;
  drift?: DriftModel;
  search?: SearchModel;
  services?: ListModel<ServiceRow>;
  namespaces?: ListModel<string>;
  errors?: ErrorsModel;
}

/** What the screens are computed from: the data and the size of the body. */
export interface Screen {
  data: TuiData;
  width: number;
  bodyHeight: number;
  /** The Services the lists show (a live run's own list, else the facts'). */
  services?: Service[];
  /** The mark of each Service's last diagnosis in this session, by "ns/name". */
  marks?: ReadonlyMap<string, Shown>;
  /** The nodes are still being read: a failed command may not be in the facts yet. */
  reading?: boolean;
  /** Where the Services come from, as messages name it ("snapshot DIR", "context NAME"). */
  where?: string;
}

/** What App.tsx does for a key: reduce an action, or act on the world. */
export type Effect =
  | { do: 'dispatch'; action: Action }
  | { do: 'quit' }
  | { do: 'recollect' }
  | { do: 'answer'; yes: boolean }
  /** Another Service diagnosed (`:svc NAME`, enter on the Services list). */
  | { do: 'diagnose'; target: DiagnosedService }
  /** `:svc ARG`: found among every Service (live: once the cluster's are listed), see openService. */
  | { do: 'find'; arg: string };

/** "ns/name" of the diagnosed Service, which the Rules screen opens at. */
export const focusOf = (data: TuiData) =>
  data.target ? `${data.target.namespace}/${data.target.service}` : undefined;

export function models(s: State, sc: Screen): Models {
  const { data, width, bodyHeight } = sc;
  const focus = focusOf(data);
  return {
    diag: s.screen === 'diag' ? diagModel(s, data.report, width, bodyHeight) : undefined,
    rules: s.screen === 'rules' ? rulesModel(s, data.nodes, focus, width, bodyHeight) : undefined,
    trace: s.screen === 'trace' ? traceModel(s, data, width, bodyHeight) : undefined,
    drift:
      s.screen === 'drift'
        ? driftModel(s, data.nodes, width, bodyHeight, data.invocation)
        : undefined,
    search:
      s.modal === 'search' && !LISTS.includes(s.screen)
        ? searchModel(s, data.nodes, width, bodyHeight)
        : undefined,
    services:
      s.screen === 'svc'
        ? servicesModel(s, listed(sc), sc.marks ?? new Map(), width, bodyHeight)
        : undefined,
    namespaces: s.screen === 'ns' ? namespacesModel(s, listed(sc), width, bodyHeight) : undefined,
    errors:
      s.screen === 'errors'
        ? errorsModel(s, data.analysis.nodeErrors, sc.reading ?? false, width, bodyHeight)
        : undefined,
  };
}

/** The Services the list screens show. */
const listed = (sc: Screen) => sc.services ?? sc.data.view.services;

/** The lists and page size the reducer moves cursors in. */
export function view(s: State, m: Models, bodyHeight: number): View {
  if (s.modal === 'help') return helpView(helpLines().length, bodyHeight);
  if (m.search) return searchView(m.search);
  if (m.diag) return diagView(m.diag);
  if (m.rules) return rulesView(m.rules);
  if (m.trace) return traceView(m.trace);
  if (m.drift) return driftView(m.drift);
  if (m.services) return listView(m.services);
  if (m.namespaces) return listView(m.namespaces);
  if (m.errors) return errorsView(m.errors);
  return { lists: [], page: 1 };
}

/** The node index of a name, else the first node. */
export const nodeIndex = (data: TuiData, name: string | undefined) =>
  Math.max(
    0,
    data.nodes.findIndex((n) => n.name === name),
  );

const dispatch = (action: Action): Effect => ({ do: 'dispatch', action });

/** The effects of a bound key in state `s`; `m` is what the screens show for `s`. */
export function navigate(s: State, action: KeyAction, m: Models, sc: Screen): Effect[] {
  if (s.modal === 'confirm') {
    if (action === 'accept' || action === 'cancel')
      return [{ do: 'answer', yes: action === 'accept' }];
    if (action !== 'quit') return [];
  }
  switch (action) {
    case 'quit':
      return [{ do: 'quit' }];
    case 'recollect':
      return [{ do: 'recollect' }];
    case 'errors':
      return [dispatch({ type: 'screen', screen: 'errors' })];
    case 'accept':
      if (s.modal === 'search' && LISTS.includes(s.screen))
        return [dispatch({ type: 'filter', text: s.query.trim() })];
      return s.modal === 'search' ? searchHit(s, m, sc) : command(s);
    case 'complete':
      return [dispatch({ type: 'setCommand', text: completeCommand(s.commandLine) })];
    case 'drill':
      if (s.screen === 'diag' && s.pane.diag === 1) return findingJump(s, m, sc);
      if (s.screen === 'svc') {
        const row = m.services?.rows[m.services.cursor];
        return row ? diagnose({ namespace: row.namespace, service: row.name }) : [];
      }
      if (s.screen === 'ns') {
        const ns = m.namespaces?.rows[m.namespaces.cursor];
        return ns ? [dispatch({ type: 'namespace', namespace: ns === ALL ? undefined : ns })] : [];
      }
      if (s.screen === 'drift') {
        const f = driftFinding(m.drift!);
        return f ? [rulesJump(s, sc, m.drift!.nodeIndex, f.service)] : [];
      }
  }
  return [dispatch({ type: 'key', action, view: view(s, m, sc.bodyHeight) })];
}

/** Enter on a search hit: its chain in the Rules screen (a Service hit: the Service). */
function searchHit(s: State, m: Models, sc: Screen): Effect[] {
  const hit = m.search?.hits[m.search.cursor];
  if (!hit) return [];
  const trees = sc.data.nodes[hit.node]?.trees;
  const chain = hit.kind === 'service' ? undefined : hit.chain;
  const at = trees && locate(trees, hit.service, chain, { open: s.open, focus: focusOf(sc.data) });
  if (at) return [dispatch({ type: 'jumpRules', node: hit.node, ...at })];
  if (!hit.chain) return [];
  const rawChain = { table: hit.table ?? 'nat', chain: hit.chain };
  return [dispatch({ type: 'jumpRules', node: hit.node, open: [], row: 0, rawChain })];
}

/** The Rules screen on a node, at a Service's tree (the diagnosed Service's when none is named). */
function rulesJump(s: State, sc: Screen, node: number, service: string | undefined): Effect {
  const focus = focusOf(sc.data);
  const trees = sc.data.nodes[node]?.trees;
  const name = service ?? focus;
  const tree = trees?.services.find(
    (t) => t.id === name || t.name === name || (name !== undefined && isPortOf(t.name, name)),
  );
  const at = trees && tree ? locate(trees, tree.id, undefined, { open: s.open, focus }) : undefined;
  return dispatch({ type: 'jumpRules', node, open: at?.open ?? [], row: at?.row ?? 0 });
}

/**
 * Enter on a finding: the drift behind it, else the rules of its Service (the diagnosed one when
 * it names none) on its node (the one shown last when it names none).
 */
function findingJump(s: State, m: Models, sc: Screen): Effect[] {
  const f = m.diag?.finding;
  const { data, width, bodyHeight } = sc;
  if (!f) return [];
  if (data.nodes.length === 0)
    return [dispatch({ type: 'flash', text: 'no node rules were read' })];
  const node = f.node ? nodeIndex(data, f.node) : Math.min(s.node.rules, data.nodes.length - 1);
  const drift = driftModel(
    { ...s, node: { ...s.node, drift: node } },
    data.nodes,
    width,
    bodyHeight,
    data.invocation,
  );
  const match = drift.findings.findIndex(
    (d) => d.id === f.id && (f.service === undefined || d.service === f.service),
  );
  const row = drift.stops.findIndex((at) => drift.lines[at]?.finding === match);
  if (f.node && match >= 0 && row >= 0) return [dispatch({ type: 'jumpDrift', node, row })];
  return [rulesJump(s, sc, node, f.service)];
}

/** Another Service's diagnosis, its steps from the top. */
const diagnose = (target: DiagnosedService): Effect[] => [
  { do: 'diagnose', target },
  dispatch({ type: 'diagnosing' }),
];

/** Enter on the ":" line: a screen, help or quit (`:svc ARG` finds a Service to diagnose, `:ns
 * NAME` lists its Services); anything else is said and closed. */
function command(s: State): Effect[] {
  const c = parseCommand(s.commandLine);
  if (!c)
    return [
      dispatch({
        type: 'flash',
        text: `unknown screen ":${s.commandLine}": try :diag :rules :drift :trace :svc :ns`,
      }),
      dispatch({ type: 'closeModal' }),
    ];
  if (c.kind === 'quit') return [{ do: 'quit' }];
  if (c.kind === 'help') return [dispatch({ type: 'help' })];
  if (c.arg !== undefined && c.screen === 'ns') {
    if (c.arg !== 'all' && valid.namespace(c.arg) === undefined)
      return [
        dispatch({ type: 'flash', text: `":ns ${c.arg}": give a namespace, or all` }),
        dispatch({ type: 'closeModal' }),
      ];
    return [dispatch({ type: 'namespace', namespace: c.arg === 'all' ? undefined : c.arg })];
  }
  if (c.arg !== undefined) return [{ do: 'find', arg: c.arg }];
  return [dispatch({ type: 'screen', screen: c.screen })];
}

/**
 * `:svc ARG` among `services`, as `kdebug svc` finds it: a cluster IP or NS/NAME as typed, a name
 * in the namespace shown, else in the one namespace holding it; several: the list to pick from.
 */
export function openService(s: State, arg: string, services: Service[], sc: Screen): Effect[] {
  const said = (text: string) => [
    dispatch({ type: 'flash', text }),
    dispatch({ type: 'closeModal' }),
  ];
  const found = findService(services, arg, s.namespace, sc.where ?? 'the facts read');
  if ('error' in found && !('ref' in found)) return said(found.error);
  const ref = 'ref' in found ? found.ref : found;
  if ('ref' in found && found.namespaces.length > 1)
    return [
      dispatch({ type: 'namespace', namespace: undefined }),
      dispatch({ type: 'filter', text: ref.name }),
      dispatch({
        type: 'flash',
        text: `${ref.name} is in ${found.namespaces.length} namespaces (${found.namespaces.join(', ')}): pick one`,
      }),
    ];
  // in none: diagnosed where it was looked for, its step 1 says so with the names it may mean
  const namespace = ref.namespace ?? s.namespace ?? sc.data.target?.namespace ?? 'default';
  // a name goes into API paths live: one Kubernetes could have made, or said
  if (valid.name(ref.name) === undefined || valid.namespace(namespace) === undefined)
    return said(`":svc ${arg}": give NAME or NAMESPACE/NAME (:PORT), or a cluster IP`);
  return diagnose({
    namespace,
    service: ref.name,
    ...(ref.port !== undefined ? { port: ref.port } : {}),
  });
}
