// The last line: the command line while typing `:`, else what is being read (long waits say
// what they wait for), else a message, else the keys that matter here.
import { Box } from 'ink';
import { completeCommand } from '../keymap.js';
import type { Activity } from '../use-facts.js';
import { LISTS, type State } from '../state.js';
import { S, T } from './text.js';

interface Props {
  state: State;
  /** What is being read right now ("node vm-12-11: iptables-save"), since when, until when. */
  activity: Activity[];
  spinner: string;
  width: number;
  /** Node commands that failed: the key that shows them whole is offered. */
  nodeErrors: number;
}

const HINTS = '?help  /search  :screen  tab pane  esc back  q quit';
/** On the lists `/` filters them, and esc drops the filter first. */
const LIST_HINTS = '?help  /filter  enter open  :screen  esc back  q quit';

export function Footer({ state, activity, spinner, width, nodeErrors }: Props) {
  let line;
  if (state.modal === 'confirm') {
    line = (
      <T>
        <S tone="key">y</S> yes <S tone="key">n</S> no <S tone="muted">(ctrl+c quits)</S>
      </T>
    );
  } else if (state.modal === 'command') {
    const completion = completeCommand(state.commandLine);
    line = (
      <T>
        <S tone="key">:</S>
        {state.commandLine}
        <S tone="accent">▏</S>
        {completion !== state.commandLine ? <S tone="muted"> {completion} (tab)</S> : null}
        <S tone="muted"> rules drift trace diag svc ns errors help q</S>
      </T>
    );
  } else if (activity.length > 0) {
    const a = activity[activity.length - 1]!;
    const seconds = Math.floor((Date.now() - a.since) / 1000);
    line = (
      <T tone="accent">
        {spinner} {a.label}
        <S tone="muted">
          {' '}
          {seconds}s{a.deadlineMs ? ` (gives up at ${Math.round(a.deadlineMs / 1000)}s)` : ''}
        </S>
        {activity.length > 1 ? <S tone="muted"> (+{activity.length - 1} more)</S> : null}
      </T>
    );
  } else if (state.flash) {
    line = <T tone="warn">{state.flash}</T>;
  } else {
    line = (
      <T tone="muted">
        {LISTS.includes(state.screen) ? LIST_HINTS : HINTS}
        {nodeErrors > 0 && state.screen !== 'errors' ? (
          <S tone="warn">{`  e ${nodeErrors} node error${nodeErrors === 1 ? '' : 's'}`}</S>
        ) : null}
      </T>
    );
  }
  return (
    <Box width={width} flexShrink={0}>
      {line}
    </Box>
  );
}
