// `kdebug svc NAME`: the guided diagnosis of one Service, from a snapshot or
// the live cluster, as the TUI, text or JSON.
import { Analysis } from '../core/analysis.js';
import { diagnose, type DiagnosedService } from '../core/diagnose.js';
import { clusterView } from '../core/kube.js';
import type { Report } from '../core/model.js';
import { parseServiceRef } from '../core/service-ref.js';
import { closeLive, connectLive, readLive, tellNodeAccess } from '../cluster/facts-source.js';
import { parseDumpsAside } from '../cluster/dump-parse.js';
import type { NodeAccessFlags } from '../cluster/node-flags.js';
import type { DebugPodConsent } from '../cluster/node-pod.js';
import { readSnapshot } from '../cluster/snapshot.js';
import { reportJson } from '../output/json.js';
import { reportText } from '../output/text.js';
import type { TuiInput } from '../tui/App.js';
import { questions } from '../tui/questions.js';
import { colorEnabled } from '../tui/theme.js';
import {
  PARSE_WORKER,
  format,
  sourceContext,
  textWidth,
  UsageError,
  VERSION,
  write,
  type GlobalOptions,
} from './io.js';
import { invocationOf } from './invocation.js';
import { interactive, loadTui } from './tui.js';
import { nodeAccessOptions, withExamples, type Define } from './flags.js';

export interface SvcOptions extends NodeAccessFlags {
  snapshot?: string;
  verbose?: boolean;
  /** How the text header names the snapshot (default: "snapshot DIR"). */
  label?: string;
}

/** What the person is asked before kdebug creates debug Pods. */
function consentLines(q: DebugPodConsent): string[] {
  return [
    `Some nodes can only be read through a privileged debug Pod: kdebug would create one on each of them, in namespace ${q.namespace} (image ${q.image}), as kubectl debug node --profile=sysadmin does.`,
    ...(q.createNamespace
      ? [
          `Namespace ${q.namespace} does not exist: kdebug creates it first, labelled pod-security.kubernetes.io/enforce=privileged, and leaves it for the next run (kubectl delete namespace ${q.namespace} removes it).`,
        ]
      : []),
    `It reads the node's rules with the node's own iptables-save and runs the probes (TCP connect, ping, a DNS lookup); it changes nothing on the node.`,
    `Each Pod is deleted when kdebug ends (also on Ctrl-C) and stops by itself after ${q.lifetimeSeconds}s. --yes skips this question.`,
    ...q.warnings.map((w) => `Warning: ${w}`),
  ];
}

function writeReport(report: Report, g: GlobalOptions, o: SvcOptions, source?: string): number {
  if (format(g) === 'json') write(reportJson(report));
  else
    write(
      reportText(report, {
        color: colorEnabled(g.color, process.env) && process.stdout.isTTY === true,
        ...textWidth(),
        verbose: o.verbose,
        source,
      }),
    );
  return report.exitCode;
}

export async function svcCommand(
  arg: string,
  o: SvcOptions,
  given: GlobalOptions,
): Promise<number> {
  const ref = parseServiceRef(arg);
  if ('error' in ref) throw new UsageError(`${ref.error}; see kdebug svc --help`);
  if (ref.namespace && given.namespace && ref.namespace !== given.namespace)
    throw new UsageError(
      `"${arg}" is in namespace ${ref.namespace}, but -n says ${given.namespace}`,
    );
  const name = ref.name;
  const g = { ...given, namespace: ref.namespace ?? given.namespace };
  if (o.snapshot !== undefined) {
    const dir = o.snapshot;
    // the TUI loads while the snapshot is read and its dumps parse
    if (format(g) === 'tui') void loadTui();
    // big dumps parse on worker threads while this one reads and types the objects
    const aside = parseDumpsAside(dir, PARSE_WORKER);
    const facts = await readSnapshot(dir);
    const view = clusterView(facts.objects);
    const analysis = new Analysis(facts, { view, parsed: await aside });
    const target = { namespace: g.namespace ?? facts.meta.namespace ?? 'default', service: name };
    const invocation = invocationOf(g, { snapshot: dir });
    const snapshot = o.label ?? `snapshot ${dir}`;
    if (format(g) === 'tui')
      return interactive(
        {
          start: 'diag',
          target,
          facts: analysis,
          invocation,
          snapshot,
          load: () => readSnapshot(dir),
        },
        g,
      );
    return writeReport(diagnose(facts, target, { invocation, analysis }), g, o, snapshot);
  }
  // in the TUI a debug Pod is created only after the person says yes there (or --yes)
  const tui = format(g) === 'tui';
  const asks = questions();
  const c = sourceContext(g);
  const cluster = await connectLive(o, c, tui ? (q) => asks.ask(consentLines(q)) : undefined);
  try {
    const target: DiagnosedService = {
      namespace: g.namespace ?? cluster.defaultNamespace,
      service: name,
    };
    if (tui) {
      // no facts yet: the TUI shows the steps completing as they arrive
      const load: TuiInput['load'] = async (progress, partial) =>
        (await readLive(cluster, target, VERSION, progress, partial)).facts;
      const invocation = invocationOf(g, o);
      const deadlines = { apiMs: 15_000, nodeMs: 1000 * (Number(o.nodeTimeout) || 60) };
      return await interactive(
        { start: 'diag', target, load, questions: asks, invocation, deadlines },
        g,
      );
    }
    const { facts, suggestions } = await readLive(cluster, target, VERSION);
    tellNodeAccess(cluster.nodeAccess(), c);
    const report = diagnose(facts, target, { suggestions, invocation: invocationOf(g, o) });
    return writeReport(report, g, o);
  } finally {
    await closeLive(cluster, c);
  }
}

/** `kdebug svc`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    nodeAccessOptions(
      parent
        .command('svc <name>')
        // kubectl's names for the resource
        .aliases(['service', 'services'])
        .description('the guided diagnosis of one Service, step by step, with evidence')
        .option('--snapshot <dir>', 'a recorded snapshot directory instead of the live cluster')
        .option('-v, --verbose', 'text: expand every finding, not only the failing ones'),
    ),
    [
      'kdebug svc nginx-svc                          # the current context and namespace',
      'kdebug svc shop/web --context prod -o json    # NS/NAME, like kubectl',
      'kdebug svc nginx-svc --snapshot DIR           # offline, from a snapshot',
    ],
  ).action((name: string, o: SvcOptions) => run(svcCommand(name, o, g())));
};
