// Everything the TUI remembers between keystrokes, and the one pure function that changes it.
// Keys arrive as table actions with a small View of what is on screen (list lengths, the row under
// the cursor), so the reducer needs no data and every transition is testable without rendering.
import type { KeyAction, ScreenName } from './keymap.js';
import type { Asked } from './questions.js';

export type Modal = 'none' | 'search' | 'command' | 'help' | 'confirm';

export interface State {
  screen: ScreenName;
  /** Screens to return to with esc. */
  back: ScreenName[];
  modal: Modal;
  /** The focused pane of each screen. */
  pane: Record<ScreenName, number>;
  /**
   * The cursor of each pane ("diag.0" = steps, "diag.1" = findings, "search", "help" ...). In a
   * pane of plain text (raw rules, the walk, help) it is the first line shown.
   */
  cursor: Record<string, number>;
  /** The user picked a step: stop following the first failing one as results arrive. */
  stepPinned: boolean;
  /** Rules: the node shown, and open/closed rows by key (absent: the row's default). */
  node: Record<'rules' | 'drift', number>;
  open: Record<string, boolean>;
  raw: boolean;
  /** Rules: a chain outside every Service tree, shown in the raw pane after a search jump. */
  rawChain?: { table: string; chain: string };
  query: string;
  /** The query before the last `/`: ↑ on an empty query brings it back. */
  lastQuery?: string;
  commandLine: string;
  /** The question shown while modal is 'confirm' (a debug Pod about to be created). */
  question?: Asked;
  /** One line for the footer: an unknown command, nothing to drill into ... */
  flash?: string;
  /** The Services list's namespace (`:ns`); none: every namespace. */
  namespace?: string;
  /** The filter a list screen (Services, Namespaces) keeps after `/` and enter. */
  filter: Partial<Record<ScreenName, string>>;
}

/** The screens whose `/` filters their own list rather than searching the rules. */
export const LISTS: ScreenName[] = ['svc', 'ns'];

/** What is on screen now, as the reducer needs it. */
export interface View {
  /** Length of each pane's list on the current screen. */
  lists: number[];
  /** Lines in one page of the focused pane. */
  page: number;
  /** Nodes the screen can switch between. */
  nodes?: number;
  /** Rules: the row under the cursor. */
  row?: { key: string; open?: boolean; parent?: number };
  /** Search results. */
  hits?: number;
  /** Where each pane's cursor is while it has not been moved (Diagnosis: the first problem). */
  starts?: number[];
}

export type Action =
  | { type: 'key'; action: KeyAction; view: View }
  | { type: 'type'; text: string }
  | { type: 'screen'; screen: ScreenName }
  | { type: 'help' }
  | { type: 'closeModal' }
  /** A new Report: follow its first problem step unless the user picked one. */
  | { type: 'report'; firstProblem: number }
  /** Resolved jump into the Rules screen: node, rows to open, the row, maybe a raw chain. */
  | {
      type: 'jumpRules';
      node: number;
      open: string[];
      row: number;
      rawChain?: { table: string; chain: string };
    }
  | { type: 'jumpDrift'; node: number; row: number }
  /** The node the run was asked to show (`--node`), once its rules are in. */
  | { type: 'node'; node: number }
  | { type: 'flash'; text: string | undefined }
  | { type: 'setCommand'; text: string }
  /** A question from outside (y or n), and its answer given. */
  | { type: 'ask'; asked: Asked }
  | { type: 'answered' }
  /** A list's filter kept (enter on its `/` line). */
  | { type: 'filter'; text: string }
  /** `:ns NAME` or enter on a namespace: the Services of that one (none: every one). */
  | { type: 'namespace'; namespace: string | undefined }
  /** Another Service diagnosed: its steps from the top, the first problem followed again. */
  | { type: 'diagnosing' };

export function initialState(screen: ScreenName = 'diag', node = 0): State {
  return {
    screen,
    back: [],
    modal: 'none',
    pane: { diag: 0, rules: 0, drift: 0, trace: 0, svc: 0, ns: 0, errors: 0 },
    cursor: {},
    stepPinned: false,
    node: { rules: node, drift: node },
    open: {},
    raw: false,
    query: '',
    commandLine: '',
    filter: {},
  };
}

const clamp = (n: number, max: number) => Math.max(0, Math.min(n, max - 1));

/** The cursor key of a pane: "rules.0", "diag.1" ... */
export const cursorKey = (screen: ScreenName, pane: number) => `${screen}.${pane}`;

export function cursorOf(s: State, screen: ScreenName, pane: number): number {
  return s.cursor[cursorKey(screen, pane)] ?? 0;
}

function setCursor(s: State, key: string, value: number): State {
  return { ...s, cursor: { ...s.cursor, [key]: value } };
}

/** Moves the cursor of the focused pane. */
function move(s: State, action: KeyAction, view: View): State {
  const pane = s.pane[s.screen];
  const length = view.lists[pane] ?? 0;
  const key = cursorKey(s.screen, pane);
  const at = s.cursor[key] ?? view.starts?.[pane] ?? 0;
  const page = Math.max(1, view.page);
  const to = {
    up: at - 1,
    down: at + 1,
    pageUp: at - page,
    pageDown: at + page,
    top: 0,
    bottom: length - 1,
  }[action as 'up'];
  let next = setCursor(s, key, clamp(to, length));
  // a new row shows its own raw rules
  if (s.screen === 'rules' && pane === 0)
    next = { ...setCursor(next, cursorKey('rules', 1), 0), rawChain: undefined };
  // a new step shows its own findings, its first failing or warning one selected
  if (s.screen === 'diag' && pane === 0) {
    const { [cursorKey('diag', 1)]: _unset, ...cursor } = next.cursor;
    next = { ...next, cursor, stepPinned: true };
  }
  // a new source or destination starts its walk from the top
  if (s.screen === 'trace' && pane < 2) next = setCursor(next, cursorKey('trace', 2), 0);
  return next;
}

function go(s: State, screen: ScreenName): State {
  if (screen === s.screen) return { ...s, modal: 'none', flash: undefined };
  return { ...s, screen, back: [...s.back, s.screen], modal: 'none', flash: undefined };
}

function screenKey(s: State, action: KeyAction, view: View): State {
  const pane = s.pane[s.screen];
  const panes = view.lists.length;
  switch (action) {
    case 'up':
    case 'down':
    case 'pageUp':
    case 'pageDown':
    case 'top':
    case 'bottom':
      return move(s, action, view);
    case 'nextPane':
      return { ...s, pane: { ...s.pane, [s.screen]: panes > 0 ? (pane + 1) % panes : 0 } };
    case 'back':
      if (pane > 0) return { ...s, pane: { ...s.pane, [s.screen]: pane - 1 } };
      // a list's filter goes first, as in k9s
      if (s.filter[s.screen])
        return {
          ...s,
          filter: { ...s.filter, [s.screen]: undefined },
          cursor: { ...s.cursor, [cursorKey(s.screen, 0)]: 0 },
        };
      if (s.screen === 'rules' && s.raw) return { ...s, raw: false, rawChain: undefined };
      if (s.back.length === 0) return s;
      return { ...s, screen: s.back[s.back.length - 1]!, back: s.back.slice(0, -1) };
    case 'drill':
      return drill(s, view);
    case 'collapse':
    case 'expand':
      return openRow(s, view, action === 'expand');
    case 'raw':
      return showRaw(s, !s.raw);
    case 'nextNode':
    case 'prevNode': {
      const which = s.screen === 'drift' ? 'drift' : 'rules';
      const n = view.nodes ?? 1;
      if (n <= 1) return s;
      const at = (s.node[which] + (action === 'nextNode' ? 1 : n - 1)) % n;
      return {
        ...s,
        node: { ...s.node, [which]: at },
        cursor: { ...s.cursor, [cursorKey(s.screen, 0)]: 0 },
        rawChain: undefined,
      };
    }
    case 'search':
      // a fresh query, as k9s's `/`: typing again does not append to the last one
      return {
        ...s,
        modal: 'search',
        query: '',
        lastQuery: s.query || s.lastQuery,
        cursor: { ...s.cursor, search: 0 },
        flash: undefined,
      };
    case 'command':
      return { ...s, modal: 'command', commandLine: '', flash: undefined };
    case 'help':
      return setCursor({ ...s, modal: 'help' }, 'help', 0);
    default:
      return s;
  }
}

/** Shows or hides the raw rule text of the row under the cursor, from its first line. */
function showRaw(s: State, raw: boolean): State {
  return {
    ...setCursor(s, cursorKey('rules', 1), 0),
    raw,
    rawChain: undefined,
    pane: { ...s.pane, rules: 0 },
  };
}

/** enter: the next pane on Diagnosis and Trace; open or close a row on Rules. */
function drill(s: State, view: View): State {
  const pane = s.pane[s.screen];
  if (s.screen === 'rules') {
    if (view.row?.open !== undefined) return openRow(s, view, !view.row.open);
    return showRaw(s, true);
  }
  if ((s.screen === 'diag' || s.screen === 'trace') && pane < view.lists.length - 1)
    return { ...s, pane: { ...s.pane, [s.screen]: pane + 1 } };
  return s;
}

/** Opens or closes the row under the cursor; closing a leaf moves to its parent row. */
function openRow(s: State, view: View, open: boolean): State {
  const row = view.row;
  if (!row || s.screen !== 'rules' || s.pane.rules !== 0) return s;
  if (row.open === undefined) {
    if (!open && row.parent !== undefined) return setCursor(s, cursorKey('rules', 0), row.parent);
    return s;
  }
  if (row.open === open) {
    if (!open && row.parent !== undefined) return setCursor(s, cursorKey('rules', 0), row.parent);
    return s;
  }
  return { ...s, open: { ...s.open, [row.key]: open } };
}

function modalKey(s: State, action: KeyAction, view: View): State {
  // a question waits for y or n: the App answers it, nothing else moves
  if (s.modal === 'confirm') return s;

  if (s.modal === 'help') {
    const at = s.cursor['help'] ?? 0;
    const length = view.lists[0] ?? 0;
    const page = Math.max(1, view.page);
    const to: Partial<Record<KeyAction, number>> = {
      down: at + 1,
      up: at - 1,
      pageDown: at + page,
      pageUp: at - page,
      top: 0,
      bottom: length - 1,
    };
    if (to[action] !== undefined) return setCursor(s, 'help', clamp(to[action]!, length));
    if (action === 'cancel') return { ...s, modal: 'none' };
    return s;
  }
  if (action === 'cancel') return { ...s, modal: 'none', flash: undefined };
  if (action === 'erase') {
    return s.modal === 'search'
      ? { ...s, query: s.query.slice(0, -1), cursor: { ...s.cursor, search: 0 } }
      : { ...s, commandLine: s.commandLine.slice(0, -1) };
  }
  if (s.modal === 'search' && action === 'up' && s.query === '' && s.lastQuery)
    return { ...s, query: s.lastQuery, cursor: { ...s.cursor, search: 0 } };
  if (s.modal === 'search' && (action === 'up' || action === 'down')) {
    const at = s.cursor['search'] ?? 0;
    return setCursor(s, 'search', clamp(at + (action === 'down' ? 1 : -1), view.hits ?? 0));
  }
  return s;
}

export function reduce(s: State, a: Action): State {
  switch (a.type) {
    case 'key':
      return s.modal === 'none' ? screenKey(s, a.action, a.view) : modalKey(s, a.action, a.view);
    case 'type':
      if (s.modal === 'search')
        return { ...s, query: s.query + a.text, cursor: { ...s.cursor, search: 0 } };
      if (s.modal === 'command') return { ...s, commandLine: s.commandLine + a.text };
      return s;
    case 'screen':
      return go(s, a.screen);
    case 'help':
      return setCursor({ ...s, modal: 'help' }, 'help', 0);
    case 'closeModal':
      return { ...s, modal: 'none' };
    case 'report':
      if (s.stepPinned || a.firstProblem < 0) return s;
      return setCursor(s, cursorKey('diag', 0), a.firstProblem);
    case 'jumpRules': {
      const open = { ...s.open };
      for (const k of a.open) open[k] = true;
      const next = go(s, 'rules');
      return {
        ...next,
        node: { ...next.node, rules: a.node },
        open,
        cursor: { ...next.cursor, [cursorKey('rules', 0)]: a.row, [cursorKey('rules', 1)]: 0 },
        raw: a.rawChain !== undefined ? true : next.raw,
        rawChain: a.rawChain,
        pane: { ...next.pane, rules: 0 },
      };
    }
    case 'node':
      return { ...s, node: { rules: a.node, drift: a.node } };
    case 'jumpDrift': {
      const next = go(s, 'drift');
      return {
        ...next,
        node: { ...next.node, drift: a.node },
        cursor: { ...next.cursor, [cursorKey('drift', 0)]: a.row },
        pane: { ...next.pane, drift: 0 },
      };
    }
    case 'flash':
      return { ...s, flash: a.text };
    case 'setCommand':
      return { ...s, commandLine: a.text };
    case 'ask':
      return { ...s, modal: 'confirm', question: a.asked };
    case 'answered':
      return { ...s, modal: 'none', question: undefined };
    case 'filter':
      return {
        ...s,
        modal: 'none',
        filter: { ...s.filter, [s.screen]: a.text || undefined },
        cursor: { ...s.cursor, [cursorKey(s.screen, 0)]: 0 },
      };
    case 'namespace': {
      const next = go(s, 'svc');
      // another namespace: its Services unfiltered
      return {
        ...next,
        namespace: a.namespace,
        filter: { ...next.filter, svc: undefined },
        cursor: { ...next.cursor, [cursorKey('svc', 0)]: 0 },
      };
    }
    case 'diagnosing': {
      // another Service: every screen's cursors and open rows start again, the lists' kept
      const next = go(s, 'diag');
      const cursor = Object.fromEntries(
        Object.entries(next.cursor).filter(([k]) => LISTS.some((l) => k.startsWith(`${l}.`))),
      );
      return {
        ...next,
        cursor,
        open: {},
        raw: false,
        rawChain: undefined,
        stepPinned: false,
        pane: { ...next.pane, diag: 0, rules: 0, drift: 0, trace: 0 },
      };
    }
  }
}
