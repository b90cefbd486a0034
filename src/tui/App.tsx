// The TUI: reads keys through the keymap into the reducer, takes the facts from useFacts and
// lays out the header, the current screen or overlay, and the footer at the terminal's size.
import { Box, useApp, useInput } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Service } from '../core/kube/objects.js';
import { shownReportStatus, type Report, type Shown } from '../core/model.js';
import { Footer } from './components/footer.js';
import { Header } from './components/header.js';
import { T, ThemeContext } from './components/text.js';
import { useTerminalSize, type Size } from './components/terminal-size.js';
import { keyName, lookup, splitKeys, type KeyFlags } from './keymap.js';
import {
  models,
  navigate,
  nodeIndex,
  openService,
  type Effect,
  type Models,
  type Screen,
} from './navigation.js';
import { initialState, LISTS, reduce, type Action, type State } from './state.js';
import { Diagnosis, firstProblem } from './screens/Diagnosis.js';
import { Drift } from './screens/Drift.js';
import { Confirm } from './screens/Confirm.js';
import { Help } from './screens/Help.js';
import type { Question } from './questions.js';
import { Rules } from './screens/Rules.js';
import { Search } from './screens/Search.js';
import { Trace } from './screens/Trace.js';
import { Namespaces, Services } from './screens/Services.js';
import { NodeErrors } from './screens/NodeErrors.js';
import { SPINNER, theme } from './theme.js';
import type { TuiInput } from './input.js';
import { useFacts } from './use-facts.js';
import { wrap } from './wrap.js';

/**
 * How the TUI ended: on a completed read (with its Report when it diagnosed a Service), before
 * the read under way completed (q, or ctrl+c: interrupted), or with nothing read (the reason).
 */
export type TuiExit =
  | { ended: 'answered'; report?: Report }
  | { ended: 'quit' | 'interrupted'; report?: Report }
  | { ended: 'unread'; reason: string };

export interface AppProps extends TuiInput {
  color: boolean;
  /** A fixed size (tests); otherwise the terminal's, followed on resize. */
  size?: Size;
  /** Called as the user quits: how the run ended, for the exit code and the line left behind. */
  onQuit?: (exit: TuiExit) => void;
}

const MIN = { columns: 40, rows: 12 };

const printable = (input: string, key: KeyFlags) =>
  input.length > 0 && !key.ctrl && !key.meta && !/[\x00-\x1f\x7f]/.test(input); // eslint-disable-line no-control-regex

export function App(props: AppProps) {
  const { data, activity, error, fatal, loading, load, diagnose } = useFacts(props);
  // each Service diagnosed in this session keeps the mark of its last diagnosis in the list
  const marks = useRef(new Map<string, Shown>()).current;
  useEffect(() => {
    if (!data.report || !data.target) return;
    const mark = shownReportStatus(data.report);
    if (mark) marks.set(`${data.target.namespace}/${data.target.service}`, mark);
  }, [data, marks]);
  // live: the cluster's Services, listed once when the list is first shown
  const [services, setServices] = useState<Service[]>();
  // keys can arrive several in one read ("jj\r"): each is reduced from the state the previous
  // one left, not from the last render's
  const [state, setState] = useState((): State => {
    const s = initialState(props.start);
    return props.search ? { ...s, modal: 'search', query: props.search } : s;
  });
  const latest = useRef(state);
  const dispatch = useCallback((a: Action) => {
    latest.current = reduce(latest.current, a);
    setState(latest.current);
  }, []);
  // the node asked for, shown once its rules are in (the first frame is drawn before them)
  const nodeShown = useRef(props.node === undefined);
  useEffect(() => {
    if (nodeShown.current || !data.nodes.some((n) => n.name === props.node)) return;
    nodeShown.current = true;
    dispatch({ type: 'node', node: nodeIndex(data, props.node) });
  }, [data, props.node, dispatch]);
  const size = useTerminalSize(props.size);
  const { exit } = useApp();
  const [tick, setTick] = useState(0);
  const report = data.report;
  const listing = state.screen === 'svc' || state.screen === 'ns';
  useEffect(() => {
    if (!listing || services || !props.listServices) return;
    props
      .listServices()
      .then(setServices)
      .catch((e: Error) =>
        dispatch({ type: 'flash', text: `listing the Services failed: ${e.message}` }),
      );
  }, [listing, services, props.listServices]);

  // follow the first failing step as results arrive, until the user picks one
  useEffect(() => dispatch({ type: 'report', firstProblem: firstProblem(report) }), [report]);
  useEffect(() => {
    if (error) dispatch({ type: 'flash', text: error });
  }, [error]);

  // questions wait in order; the first is shown, and unanswered ones are "no" when the TUI ends
  const asked = useRef<Question[]>([]);
  useEffect(() => {
    const unlisten = props.questions?.listen((q) => {
      asked.current.push(q);
      if (asked.current.length === 1) dispatch({ type: 'ask', asked: q });
    });
    return () => {
      unlisten?.();
      for (const q of asked.current.splice(0)) q.answer(false);
    };
  }, [props.questions]);
  const answer = (yes: boolean) => {
    asked.current.shift()?.answer(yes);
    dispatch({ type: 'answered' });
    const next = asked.current[0];
    if (next) dispatch({ type: 'ask', asked: next });
  };
  const pending =
    !fatal && (activity.length > 0 || report?.steps.some((s) => s.status === 'pending'));
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(() => setTick((t) => t + 1), 100);
    return () => clearInterval(timer);
  }, [pending]);

  const width = size.columns;
  // one line is left free so the last frame never scrolls the terminal
  const bodyHeight = size.rows - 4;
  // what each screen shows, computed once per state (the key handler and the render share it)
  const cache = useMemo(() => new WeakMap<State, Models>(), [data, width, bodyHeight, services]);
  const screen: Screen = {
    data,
    width,
    bodyHeight,
    marks,
    reading: loading,
    ...(services ? { services } : {}),
    where: props.snapshot ?? `context ${data.facts.meta.context ?? ''}`.trim(),
  };
  const modelsOf = (s: State): Models => {
    let m = cache.get(s);
    if (!m) cache.set(s, (m = models(s, screen)));
    return m;
  };
  const shown = modelsOf(state);

  // what the screen shows decides: a read still under way has no answer yet
  const quit = (interrupt: boolean) => {
    if (loading) props.onQuit?.({ ended: interrupt ? 'interrupted' : 'quit', report });
    else if (fatal !== undefined) props.onQuit?.({ ended: 'unread', reason: fatal });
    else props.onQuit?.({ ended: 'answered', report });
    exit();
  };

  useInput((input, key) => {
    // keys typed faster than a read arrive together ("jjj", three backspaces): one at a time,
    // except plain text typed into the search or command line
    const text = latest.current.modal === 'search' || latest.current.modal === 'command';
    const controls = /[\x00-\x1f\x7f]/.test(input); // eslint-disable-line no-control-regex
    if ((!text || controls) && input.length > 1 && !key.ctrl && !key.meta) {
      for (const k of splitKeys(input)) onKey(k.input, k.key);
      return;
    }
    onKey(input, key);
  });

  function onKey(input: string, key: KeyFlags) {
    const s = latest.current;
    const where = s.modal === 'none' ? s.screen : s.modal;
    const name = keyName(input, key);
    const binding = lookup(where, name);
    if (!binding) {
      if ((s.modal === 'search' || s.modal === 'command') && printable(input, key))
        dispatch({ type: 'type', text: input });
      return;
    }
    run(navigate(latest.current, binding.action, modelsOf(latest.current), screen), name);
  }

  function run(effects: Effect[], name = '') {
    for (const e of effects) {
      if (e.do === 'dispatch') dispatch(e.action);
      // raw mode turns the terminal's interrupt into a key: it ends the run as SIGINT would
      else if (e.do === 'quit') return quit(name === 'ctrl+c');
      else if (e.do === 'recollect') load();
      else if (e.do === 'diagnose') diagnose(e.target);
      else if (e.do === 'find') void find(e.arg);
      else answer(e.yes);
    }
  }

  // `:svc ARG` looks among every Service: live, the cluster's (listed once), else the facts'
  async function find(arg: string) {
    let list = services ?? (props.listServices ? undefined : data.view.services);
    if (!list) {
      dispatch({ type: 'closeModal' });
      // unlisted: a name is looked for in the namespace shown, as before the list
      list = await props.listServices!().then(
        (l) => {
          setServices(l);
          return l;
        },
        (e: Error) => {
          dispatch({ type: 'flash', text: `listing the Services failed: ${e.message}` });
          return data.view.services;
        },
      );
    }
    run(openService(latest.current, arg, list, screen));
  }

  const t = useMemo(() => theme(props.color), [props.color]);
  if (size.columns < MIN.columns || size.rows < MIN.rows) {
    return (
      <ThemeContext.Provider value={t}>
        <T tone="warn">
          kdebug needs at least {MIN.columns}x{MIN.rows} (now {size.columns}x{size.rows})
        </T>
      </ThemeContext.Provider>
    );
  }

  let body;
  if (fatal && state.modal !== 'help' && !LISTS.includes(state.screen))
    body = (
      <Box flexDirection="column" width={width}>
        {wrap(`kdebug: ${fatal}`, width, '  ').map((line, i) => (
          <T key={i} tone="bad">
            {line}
          </T>
        ))}
        <T tone="muted">q quits (exit 2) · ctrl+r tries again</T>
      </Box>
    );
  else if (state.modal === 'confirm')
    body = <Confirm asked={state.question ?? { lines: [] }} width={width} height={bodyHeight} />;
  else if (state.modal === 'help')
    body = <Help top={state.cursor['help'] ?? 0} width={width} height={bodyHeight} />;
  else if (shown.search) body = <Search model={shown.search} />;
  else if (shown.diag) body = <Diagnosis model={shown.diag} state={state} tick={tick} />;
  else if (shown.rules) body = <Rules model={shown.rules} state={state} reading={loading} />;
  else if (shown.trace) body = <Trace model={shown.trace} state={state} />;
  else if (shown.drift) body = <Drift model={shown.drift} reading={loading} />;
  else if (shown.services) body = <Services model={shown.services} namespace={state.namespace} />;
  else if (shown.namespaces) body = <Namespaces model={shown.namespaces} />;
  else if (shown.errors) body = <NodeErrors model={shown.errors} width={width} />;

  const rulesNode = data.nodes[Math.min(state.node.rules, data.nodes.length - 1)];
  return (
    <ThemeContext.Provider value={t}>
      <Box flexDirection="column" width={width} height={size.rows - 1}>
        <Header
          screen={state.screen}
          report={report}
          service={data.service}
          context={data.facts.meta.context}
          unread={fatal !== undefined}
          snapshot={
            props.snapshot
              ? { label: props.snapshot, capturedAt: data.facts.meta.capturedAt }
              : undefined
          }
          source={rulesNode ? `rules of ${rulesNode.name}` : undefined}
          width={width}
        />
        <Box height={bodyHeight} flexShrink={0}>
          {body}
        </Box>
        <Footer
          state={state}
          nodeErrors={data.analysis.nodeErrors.count}
          activity={activity}
          spinner={SPINNER[tick % SPINNER.length]!}
          width={width}
        />
      </Box>
    </ThemeContext.Provider>
  );
}
