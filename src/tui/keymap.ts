// The one keymap: every key, what it does, and where. The `?` help is generated from this table,
// so a binding that is not here does not exist and one that is here is documented.

export type ScreenName = 'diag' | 'rules' | 'drift' | 'trace' | 'svc' | 'ns' | 'errors';
/** Where a binding applies: a screen, a modal (search, command line, help), or every screen. */
export type Where = ScreenName | 'search' | 'command' | 'help' | 'confirm' | 'all';

export type KeyAction =
  | 'up'
  | 'down'
  | 'pageUp'
  | 'pageDown'
  | 'top'
  | 'bottom'
  | 'drill'
  | 'back'
  | 'nextPane'
  | 'collapse'
  | 'expand'
  | 'raw'
  | 'nextNode'
  | 'prevNode'
  | 'search'
  | 'command'
  | 'help'
  | 'errors'
  | 'recollect'
  | 'quit'
  | 'accept'
  | 'cancel'
  | 'erase'
  | 'complete';

export interface Binding {
  keys: string[];
  action: KeyAction;
  description: string;
  screens: Where[];
}

export const SCREENS: { name: ScreenName; title: string; command: string; aliases: string[] }[] = [
  { name: 'diag', title: 'Diagnosis', command: 'diag', aliases: ['diagnosis', 'steps'] },
  { name: 'rules', title: 'Rules', command: 'rules', aliases: ['rule', 'tree'] },
  { name: 'drift', title: 'Drift', command: 'drift', aliases: ['expected'] },
  { name: 'trace', title: 'Trace', command: 'trace', aliases: ['walk', 'packet'] },
  // as kubectl names them: `:svc NAME` (NS/NAME, IP) diagnoses one, `:ns NAME` picks one
  { name: 'svc', title: 'Services', command: 'svc', aliases: ['services', 'service'] },
  { name: 'ns', title: 'Namespaces', command: 'ns', aliases: ['namespaces', 'namespace'] },
  { name: 'errors', title: 'Node errors', command: 'errors', aliases: ['err', 'node-errors'] },
];

const SCREEN_NAMES: Where[] = SCREENS.map((s) => s.name);

export const KEYMAP: Binding[] = [
  { keys: ['j', 'down'], action: 'down', description: 'move down', screens: ['all', 'help'] },
  { keys: ['k', 'up'], action: 'up', description: 'move up', screens: ['all', 'help'] },
  {
    keys: ['pgdn', 'ctrl+f'],
    action: 'pageDown',
    description: 'page down',
    screens: ['all', 'help'],
  },
  { keys: ['pgup', 'ctrl+b'], action: 'pageUp', description: 'page up', screens: ['all', 'help'] },
  { keys: ['g', 'home'], action: 'top', description: 'first line', screens: ['all', 'help'] },
  { keys: ['G', 'end'], action: 'bottom', description: 'last line', screens: ['all', 'help'] },
  {
    keys: ['enter'],
    action: 'drill',
    description: 'drill in: open the step, or the rules behind a finding',
    screens: ['diag', 'drift'],
  },
  {
    keys: ['enter'],
    action: 'drill',
    description: 'open or close a Service or chain',
    screens: ['rules'],
  },
  {
    keys: ['enter'],
    action: 'drill',
    description: 'next: source, destination, walk',
    screens: ['trace'],
  },
  { keys: ['enter'], action: 'drill', description: 'diagnose the Service', screens: ['svc'] },
  { keys: ['enter'], action: 'drill', description: 'its Services', screens: ['ns'] },
  { keys: ['/'], action: 'search', description: 'filter the list', screens: ['svc', 'ns'] },
  { keys: ['esc'], action: 'back', description: 'back', screens: ['all'] },
  { keys: ['tab'], action: 'nextPane', description: 'next pane', screens: ['all'] },
  { keys: ['h', 'left'], action: 'collapse', description: 'close', screens: ['rules'] },
  { keys: ['l', 'right'], action: 'expand', description: 'open', screens: ['rules'] },
  { keys: ['r'], action: 'raw', description: 'raw rule text on/off', screens: ['rules'] },
  { keys: ['n'], action: 'nextNode', description: 'next node', screens: ['rules', 'drift'] },
  { keys: ['p'], action: 'prevNode', description: 'previous node', screens: ['rules', 'drift'] },
  { keys: ['/'], action: 'search', description: 'fuzzy search the rules', screens: ['all'] },
  { keys: [':'], action: 'command', description: 'switch screen by name', screens: ['all'] },
  { keys: ['?'], action: 'help', description: 'this help', screens: ['all'] },
  {
    keys: ['e'],
    action: 'errors',
    description: 'the node commands that failed, whole',
    screens: ['all'],
  },
  { keys: ['ctrl+r'], action: 'recollect', description: 're-collect the facts', screens: ['all'] },
  { keys: ['q'], action: 'quit', description: 'quit', screens: ['all'] },
  {
    keys: ['ctrl+c'],
    action: 'quit',
    description: 'quit from anywhere',
    screens: ['all', 'search', 'command', 'help', 'confirm'],
  },
  { keys: ['down', 'ctrl+n'], action: 'down', description: 'next result', screens: ['search'] },
  { keys: ['up', 'ctrl+p'], action: 'up', description: 'previous result', screens: ['search'] },
  {
    keys: ['enter'],
    action: 'accept',
    description: 'jump to it in the Rules screen (a list: keep the filter)',
    screens: ['search'],
  },
  { keys: ['enter'], action: 'accept', description: 'run the command', screens: ['command'] },
  { keys: ['tab'], action: 'complete', description: 'complete the name', screens: ['command'] },
  {
    keys: ['backspace'],
    action: 'erase',
    description: 'delete a character',
    screens: ['search', 'command'],
  },
  { keys: ['esc'], action: 'cancel', description: 'close', screens: ['search', 'command'] },
  { keys: ['esc', '?', 'q'], action: 'cancel', description: 'close the help', screens: ['help'] },
  {
    keys: ['y'],
    action: 'accept',
    description: 'yes: create the debug Pods',
    screens: ['confirm'],
  },
  {
    keys: ['n', 'esc'],
    action: 'cancel',
    description: 'no: read the nodes without them',
    screens: ['confirm'],
  },
];

/** The subset of Ink's Key this module reads (kept structural so tests need no Ink). */
export interface KeyFlags {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  home?: boolean;
  end?: boolean;
  return?: boolean;
  escape?: boolean;
  tab?: boolean;
  shift?: boolean;
  ctrl?: boolean;
  meta?: boolean;
  backspace?: boolean;
  delete?: boolean;
}

/** The name of a keypress as the table spells it: "j", "down", "ctrl+r", "enter" ... */
export function keyName(input: string, key: KeyFlags): string {
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.leftArrow) return 'left';
  if (key.rightArrow) return 'right';
  if (key.pageUp) return 'pgup';
  if (key.pageDown) return 'pgdn';
  if (key.home) return 'home';
  if (key.end) return 'end';
  if (key.return) return 'enter';
  if (key.escape) return 'esc';
  if (key.tab) return key.shift ? 'shift+tab' : 'tab';
  // terminals send DEL (0x7f) for the backspace key; Ink has reported it as either
  if (key.backspace || key.delete) return 'backspace';
  if (key.ctrl && input.length === 1) return `ctrl+${input.toLowerCase()}`;
  if (key.meta && input.length === 1) return `meta+${input}`;
  return input === ' ' ? 'space' : input;
}

/** Keys that arrived in one read ("jj\r"), one by one, with the flags Ink would have set. */
export function splitKeys(input: string): { input: string; key: KeyFlags }[] {
  return [...input].map((ch) => {
    if (ch === '\r' || ch === '\n') return { input: '', key: { return: true } };
    if (ch === '\t') return { input: '', key: { tab: true } };
    if (ch === '\x7f' || ch === '\b') return { input: '', key: { backspace: true } };
    if (ch === '\x1b') return { input: '', key: { escape: true } };
    const code = ch.charCodeAt(0);
    // ctrl+letter arrives as 1..26
    if (code >= 1 && code <= 26)
      return { input: String.fromCharCode(code + 96), key: { ctrl: true } };
    return { input: ch, key: {} };
  });
}

/** The binding for a key where the user is: the screen's own first, then every screen's. */
export function lookup(where: Where, name: string): Binding | undefined {
  const own = KEYMAP.find((b) => b.screens.includes(where) && b.keys.includes(name));
  if (own || !SCREEN_NAMES.includes(where)) return own;
  return KEYMAP.find((b) => b.screens.includes('all') && b.keys.includes(name));
}

export interface HelpSection {
  title: string;
  rows: { keys: string; description: string }[];
}

const HELP_TITLES: [Where, string][] = [
  ['all', 'Everywhere'],
  ...SCREENS.map((s) => [s.name, s.title] as [Where, string]),
  ['search', 'Search (/)'],
  ['command', 'Command line (:)'],
  ['confirm', 'Before creating debug Pods'],
];

/** The help screen, section by section, straight from the table. */
export function helpSections(): HelpSection[] {
  const sections: HelpSection[] = HELP_TITLES.map(([where, title]) => ({
    title,
    rows: KEYMAP.filter((b) => b.screens.includes(where)).map((b) => ({
      keys: b.keys.join(' '),
      description: b.description,
    })),
  }));
  sections.push({
    title: 'Screens (: then a name)',
    rows: [
      ...SCREENS.map((s) => ({
        keys: `:${s.command}`,
        description: `${s.title}${s.aliases.length ? ` (also ${s.aliases.map((a) => `:${a}`).join(' ')})` : ''}`,
      })),
      { keys: ':help', description: 'this help' },
      { keys: ':q', description: 'quit' },
    ],
  });
  return sections.filter((s) => s.rows.length > 0);
}

export type Command =
  { kind: 'screen'; screen: ScreenName; arg?: string } | { kind: 'help' } | { kind: 'quit' };

/** What a `:` command line means (`:svc NS/NAME`: the screen and its argument); undefined for an
 * unknown name. */
export function parseCommand(text: string): Command | undefined {
  const [word = '', arg, ...extra] = text.trim().replace(/^:/, '').split(/\s+/);
  const c = screenCommand(word.toLowerCase());
  if (!c || (arg === undefined && extra.length === 0)) return c;
  // only the Services and Namespaces lists take a name
  if (c.kind !== 'screen' || (c.screen !== 'svc' && c.screen !== 'ns') || extra.length > 0)
    return undefined;
  return { ...c, arg };
}

function screenCommand(name: string): Command | undefined {
  if (name === 'q' || name === 'quit' || name === 'q!') return { kind: 'quit' };
  if (name === 'help' || name === '?') return { kind: 'help' };
  const screen = SCREENS.find((s) => s.command === name || s.aliases.includes(name));
  if (screen) return { kind: 'screen', screen: screen.name };
  // a unique prefix, as k9s takes it (":r" is :rules; ":t" is :trace or :tree, so neither)
  const all: { names: string[]; command: Command }[] = [
    ...SCREENS.map((s) => ({
      names: [s.command, ...s.aliases],
      command: { kind: 'screen', screen: s.name } as Command,
    })),
    { names: ['help'], command: { kind: 'help' } },
    { names: ['quit'], command: { kind: 'quit' } },
  ];
  const hits = all.filter((e) => e.names.some((n) => n.startsWith(name)));
  return name !== '' && hits.length === 1 ? hits[0]!.command : undefined;
}

/** Completes a partial command name: to the command when it names one (":r" to rules), else
 * to what the names it starts share. */
export function completeCommand(text: string): string {
  // the name alone: an argument (`:svc kube-system/kube-d`) is kept as typed
  const [word = '', ...rest] = text.trimStart().split(/(\s+)/);
  if (rest.length > 0) return `${completeName(word)}${rest.join('')}`;
  return completeName(text);
}

function completeName(text: string): string {
  const t = text.trim().toLowerCase();
  if (t === '') return text;
  const one = parseCommand(t);
  if (one?.kind === 'screen') return SCREENS.find((s) => s.name === one.screen)!.command;
  if (one) return one.kind;
  const names = [...SCREENS.flatMap((s) => [s.command, ...s.aliases]), 'help', 'quit'];
  const matches = names.filter((n) => n.startsWith(t));
  if (matches.length === 0) return text;
  let shared = matches[0]!;
  for (const m of matches) while (!m.startsWith(shared)) shared = shared.slice(0, -1);
  return shared;
}
