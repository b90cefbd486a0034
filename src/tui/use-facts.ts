// The facts the TUI shows: read (again on ctrl-r, or for another Service), handed over in part
// while the read goes on, and analysed; with what is being read and why a read failed.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { CollectProgress } from '../cluster/collect.js';
import type { DiagnosedService } from '../core/diagnose.js';
import { NO_MODE } from '../core/dataplane/modes.js';
import type { Facts } from '../core/model.js';
import type { PartialFacts, TuiInput } from './input.js';
import { analyze, type CodedFacts, type TuiData } from './data.js';

/** Facts read so far, and what is still being read: the steps that can run, run. */
/** What is being read, since when, and when it gives up. */
export interface Activity {
  label: string;
  since: number;
  deadlineMs?: number;
}

/** Nothing read (the run's meta aside): no node, so no mode's code. */
const empty = (meta: Facts['meta'] = {}): CodedFacts => ({
  facts: { objects: [], nodes: {}, meta },
  code: NO_MODE,
});
/** Nothing read yet: every step pending. */
const COLLECTING = { objects: true, nodes: true };

/** Facts and what the core made of them, with what is being read while loading; `diagnose`
 * turns to another Service (read live where the input can, else from the facts in hand). */
export function useFacts(input: TuiInput) {
  const options = useRef({ ...input }).current;
  // the steps pending first, whatever the input: the frame is drawn before the diagnosis runs
  const [data, setData] = useState<TuiData>(() =>
    analyze(empty(options.facts?.facts.meta), {
      ...options,
      rules: undefined,
      collecting: COLLECTING,
    }),
  );
  const [activity, setActivity] = useState<Activity[]>(() =>
    options.facts ? [{ label: 'diagnosing', since: Date.now() }] : [],
  );
  const [error, setError] = useState<string>();
  const [fatal, setFatal] = useState<string>(); // the load failed as a whole: nothing to show
  // a read or the diagnosis under way: quitting now leaves without its answer
  const [loading, setLoading] = useState(true);
  const mounted = useRef(true);
  const diagnosed = useRef(false);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  // the read whose results are shown: a newer one (another Service picked) supersedes it at once
  const current = useRef(0);
  const busy = useRef(false);
  const load = useCallback(
    (read: TuiInput['load'] = options.load, supersede = false): void => {
      if (busy.current && !supersede) return;
      busy.current = true;
      const mine = ++current.current;
      const live = () => mounted.current && current.current === mine;
      // the Service (and options) this read is for: a later pick does not relabel its facts
      const at = { ...options };
      setLoading(true);
      setError(undefined);
      setFatal(undefined);
      const deadlines = options.deadlines;
      setActivity([{ label: 'reading facts', since: Date.now(), deadlineMs: deadlines?.apiMs }]);
      const label = (p: CollectProgress) =>
        p.node ? `node ${p.node}: ${p.what}` : `reading ${p.what}`;
      // reads still on their way when the load ended (it failed) are not activity any more
      let settled = false;
      const onProgress = (p: CollectProgress) => {
        if (!live() || settled) return;
        setActivity((a) => {
          const rest = a.filter((x) => x.label !== label(p) && x.label !== 'reading facts');
          const deadlineMs = p.node ? deadlines?.nodeMs : deadlines?.apiMs;
          return p.state === 'start'
            ? [...rest, { label: label(p), since: Date.now(), deadlineMs }]
            : rest;
        });
        // a node's: the key first, a long reason is cut at the terminal's edge and `e` shows it whole
        if (p.state === 'failed')
          setError(`${label(p)} failed${p.node ? ' (e shows why)' : ''}: ${p.error ?? ''}`);
      };
      // each read's analysis takes over the dumps the one before parsed: parsed once per run
      const onPartial: PartialFacts = (facts, collecting) => {
        if (live()) setData((d) => analyze(facts, { ...at, collecting }, d.analysis));
      };
      read(onProgress, onPartial)
        .then((facts) => live() && setData((d) => analyze(facts, at, d.analysis)))
        .catch((e: Error) => {
          if (!live()) return;
          // nothing was read that a step could use: the reason replaces the spinners; another
          // Service's facts are not this one's
          setFatal(e.message);
          setData((d) => analyze(sameService(d.target, at.target) ? d.analysis : empty(), at));
        })
        .finally(() => {
          settled = true;
          if (!live()) return;
          busy.current = false;
          setActivity([]);
          setLoading(false);
        });
    },
    [options],
  );
  useEffect(() => {
    if (options.facts === undefined) load();
  }, [options, load]);
  // facts in hand: diagnosed as soon as the first frame is written (Ink writes it on commit,
  // before layout effects), so a large snapshot's diagnosis never leaves the screen blank
  useLayoutEffect(() => {
    const facts = options.facts;
    if (facts === undefined || diagnosed.current) return;
    diagnosed.current = true;
    setData(analyze(facts, { ...options }));
    setActivity([]);
    setLoading(false);
  }, [options]);
  const diagnose = useCallback(
    (target: DiagnosedService) => {
      options.target = target;
      if (options.loadFor) {
        options.load = options.loadFor(target);
        // the new Service's steps pending at once: the header never names the one left
        setData((d) => analyze(empty(d.facts.meta), { ...options, collecting: COLLECTING }));
        load(options.load, true);
        return;
      }
      // from the facts in hand: a re-read under way is for the Service left, and is dropped
      if (busy.current) {
        current.current++;
        busy.current = false;
        setActivity([]);
        setLoading(false);
      }
      setData((d) => analyze(d.analysis, { ...options }));
    },
    [options, load],
  );
  return { data, activity, error, fatal, loading, load: () => load(), diagnose };
}

/** Whether two targets are the same Service (its port aside). */
const sameService = (a?: DiagnosedService, b?: DiagnosedService) =>
  a?.namespace === b?.namespace && a?.service === b?.service;
