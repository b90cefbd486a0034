// `kdebug svc NAME`: the guided diagnosis of one Service, from a snapshot or
// the live cluster, as the TUI, text or JSON.
import { join } from 'node:path';
import { Analysis, loadDataplanes } from '../core/nodes/analysis.js';
import { EVERY_MODE, loadModes } from '../core/dataplane/modes.js';
import { diagnose, type DiagnosedService } from '../core/diagnose.js';
import { clusterView } from '../core/kube/objects.js';
import { valid } from '../core/findings/next-command.js';
import { SERVICE_NAME } from '../core/checks/service.js';
import { thousands, type Facts, type Report } from '../core/model.js';
import {
  parseServiceAddress,
  parseServiceRef,
  serviceAt,
  serviceNamed,
  type ServiceRef,
} from '../core/kube/service-ref.js';
import type { NodeChoiceFlags } from '../cluster/live-diagnosis.js';
import { parseDumpsAside } from '../cluster/dump-parse.js';
import type { NodeTally } from '../cluster/collect.js';
import type { NodeAccessFlags } from '../cluster/nodes/flags.js';
import type { DebugPodConsent } from '../cluster/nodes/debug-pod.js';
import { readSnapshot } from '../cluster/snapshot/read.js';
import { ignoredMeta } from '../core/facts/meta.js';
import type { TuiInput } from '../tui/input.js';
import { colorEnabled } from '../tui/theme.js';
import {
  PARSE_WORKER,
  format,
  sourceContext,
  statusLine,
  tell,
  textWidth,
  UsageError,
  VERSION,
  write,
  writeDoc,
  type GlobalOptions,
} from './common/io.js';
import { invocationOf, selfCommand } from './common/invocation.js';
import { interactive, loadTui } from './common/tui.js';
import type { Command } from 'commander';
import { nodeAccessOptions, withExamples, type Define } from './common/flags.js';

export interface SvcOptions extends NodeAccessFlags {
  snapshot?: string;
  verbose?: boolean;
  /** Which nodes to read live: --nodes a,b / --all-nodes / --max-nodes N / --from KIND/NAME. */
  nodes?: string;
  allNodes?: boolean;
  maxNodes?: string;
  from?: string;
  nodeConcurrency?: string;
  /** -A: the Service of that name in whichever namespace holds it. */
  allNamespaces?: boolean;
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
    `It reads the node's rules with the node's own iptables (the Service's chains by name, or the whole iptables-save) and runs the probes (TCP connect, ping, a DNS lookup); it changes nothing on the node.`,
    `Each Pod is deleted when kdebug ends (also on Ctrl-C) and stops by itself after ${q.lifetimeSeconds}s. --yes skips this question.`,
  ];
}

async function writeReport(
  report: Report,
  g: GlobalOptions,
  o: SvcOptions,
  source?: string,
): Promise<number> {
  // each output's module is loaded only by the runs that print it
  if (format(g) === 'json') writeDoc((await import('../output/json.js')).reportDoc(report));
  else
    write(
      (await import('../output/text.js')).reportText(report, {
        color: colorEnabled(g.color, process.env) && process.stdout.isTTY === true,
        ...textWidth(),
        verbose: o.verbose,
        source,
      }),
    );
  return report.exitCode;
}

/** The Service an address names, or the reason none is, as a usage error. */
function found(r: ServiceRef | { error: string }, more: () => string = () => ''): ServiceRef {
  if ('error' in r) throw new UsageError(`${r.error}${more()}`);
  return r;
}

/** The Service at an address, or the reason none is, as a usage error: with the nodes whose rules
 * still route it, if any (their module loads only for that message). */
async function foundAt(
  r: ServiceRef | { error: string },
  analysis: Analysis,
  at: { ip: string; port?: string },
): Promise<ServiceRef> {
  if (!('error' in r)) return r;
  const { stillRoutedText } = await import('../core/nodes/routed-at.js');
  return found(r, () => stillRoutedText(analysis, at));
}

/** `NAME:PORT`, `IP:PORT`: the port narrowed to (-A's lookup returns the name alone). */
function portOf(named: ServiceRef, typed: ServiceRef | undefined): { port?: string } {
  const port = named.port ?? typed?.port;
  return port !== undefined ? { port } : {};
}

/** The Service a snapshot was taken for (its meta.json), when none is named. */
function snapshotService(facts: Facts, dir: string): { namespace?: string; name: string } {
  const { service, namespace } = facts.meta;
  const ref = typeof service === 'string' ? parseServiceRef(service) : undefined;
  if (!ref || 'error' in ref || ref.namespace !== undefined)
    throw new UsageError(
      `${dir}: its meta.json names no Service; give one: ${selfCommand(`svc NAME --snapshot ${dir}`)}`,
    );
  return typeof namespace === 'string' ? { namespace, name: ref.name } : { name: ref.name };
}

export async function svcCommand(
  arg: string | undefined,
  o: SvcOptions,
  given: GlobalOptions,
): Promise<number> {
  // an address as an application logs it (10.96.0.10, IP:PORT) names the Service that has it
  const at = arg === undefined ? undefined : parseServiceAddress(arg);
  const ref = arg === undefined || at ? undefined : parseServiceRef(arg);
  if (ref && 'error' in ref) throw new UsageError(`${ref.error}; see ${selfCommand('svc --help')}`);
  // the API server holds no Service of any other name: refused before anything is read; a name
  // wrong only in case goes on to the lookup, whose did-you-mean names the Service
  if (ref && !SERVICE_NAME.test(ref.name.toLowerCase()))
    throw new UsageError(
      `"${ref.name}"${ref.name === arg ? '' : ` (in "${arg}")`} is not a Service name: a DNS-1035 label is lowercase letters, digits and '-', starts with a letter, ends with a letter or digit, at most 63 characters`,
    );
  if (ref?.namespace && given.namespace && ref.namespace !== given.namespace)
    throw new UsageError(
      `"${arg}" is in namespace ${ref.namespace}, but -n says ${given.namespace}`,
    );
  if (o.allNamespaces && given.namespace)
    throw new UsageError('-A finds the Service in every namespace: give no namespace with it');
  if (o.allNamespaces && !ref)
    throw new UsageError(
      `-A finds a Service by its name: give one (${selfCommand('svc NAME -A')})`,
    );
  // NS/NAME with -A (as its completion offers it) names the one: nothing left to find
  const anywhere = o.allNamespaces && ref?.namespace === undefined;
  const which = nodeChoiceFlags(o);
  if (o.snapshot !== undefined) {
    if (Object.keys(which).length > 0)
      throw new UsageError(
        '--nodes, --all-nodes, --max-nodes, --node-concurrency and --from are for reading nodes live: a snapshot holds the nodes it recorded',
      );
    const dir = o.snapshot;
    // the TUI loads while the snapshot is read and its dumps parse
    if (format(given) === 'tui') void loadTui();
    // big dumps parse on worker threads while this one reads and types the objects
    const aside = parseDumpsAside(dir, PARSE_WORKER);
    const facts = await readSnapshot(dir);
    for (const note of ignoredMeta(facts.meta)) tell(`note: ${join(dir, 'meta.json')}: ${note}`);
    const view = clusterView(facts.objects);
    // a diagnosis of nothing would read as one: said as what it is
    const unnamed = view.services.find((x) => x.name === '');
    if (facts.objects.length === 0 || unnamed)
      throw new UsageError(
        `not a snapshot of a cluster: ${join(dir, 'objects.json')}: ${unnamed ? 'a Service without metadata.name' : 'no objects'} (${selfCommand('snapshot save')} writes the Service, its Pods and the Nodes)`,
      );
    const [parsed, code] = await Promise.all([aside, loadDataplanes(facts, view)]);
    const analysis = new Analysis(facts, { view, parsed, code });
    // no name: the Service the snapshot was taken for
    const named = at
      ? await foundAt(serviceAt(view.services, arg!, at, dir), analysis, at)
      : anywhere
        ? found(serviceNamed(view.services, ref!.name, dir))
        : (ref ?? snapshotService(facts, dir));
    const g = { ...given, namespace: named.namespace ?? given.namespace };
    const target = {
      namespace: g.namespace ?? facts.meta.namespace ?? 'default',
      service: named.name,
      ...portOf(named, ref),
    };
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
          load: () =>
            readSnapshot(dir).then(async (f) => ({ facts: f, code: await loadDataplanes(f) })),
        },
        g,
      );
    return writeReport(diagnose(facts, target, { invocation, analysis }), g, o, snapshot);
  }
  if (!ref && !at)
    throw new UsageError(`missing required argument 'name'; see ${selfCommand('svc --help')}`);
  // the live cluster's modules (client-node, ssh2, the debug Pods) only for live runs
  const { closeLive, connectLive, tellNodeAccess } = await import('../cluster/facts-source.js');
  const { readLive, runTimings } = await import('../cluster/live-diagnosis.js');
  const { questions } = await import('../tui/questions.js');
  // in the TUI a debug Pod is created only after the person says yes there (or --yes)
  const tui = format(given) === 'tui';
  const asks = questions();
  const c = sourceContext(given);
  const timings = process.env['KDEBUG_TIMINGS'] === '1' && !tui ? runTimings(c) : undefined;
  const cluster = await connectLive(
    o,
    c,
    tui ? (q) => asks.ask(consentLines(q), q.warnings) : undefined,
  );
  timings?.phase('connected');
  try {
    const named = at
      ? found(
          serviceAt(
            clusterView(await cluster.list({ path: '/api/v1/services' })).services,
            arg!,
            at,
            `context ${cluster.meta.context ?? ''}`.trim(),
          ),
        )
      : anywhere
        ? found(
            serviceNamed(
              clusterView(
                await cluster.list({
                  path: '/api/v1/services',
                  fieldSelector: `metadata.name=${ref!.name}`,
                }),
              ).services,
              ref!.name,
              `context ${cluster.meta.context ?? ''}`.trim(),
            ),
          )
        : ref!;
    const name = named.name;
    const g = { ...given, namespace: named.namespace ?? given.namespace };
    const target: DiagnosedService = {
      namespace: g.namespace ?? cluster.defaultNamespace,
      service: name,
      ...portOf(named, ref),
    };
    if (tui) {
      // no facts yet: the TUI shows the steps completing as they arrive; `:svc NAME` reads another
      const loadFor =
        (target: DiagnosedService): TuiInput['load'] =>
        async (progress, partial) => {
          // the nodes read so far, one activity line that each node done replaces
          let shown: string | undefined;
          const tally = (t: NodeTally) => {
            if (shown) progress({ what: shown, state: 'done' });
            shown = t.left > 0 ? nodesText(t) : undefined;
            if (shown) progress({ what: shown, state: 'start' });
          };
          const read = await readLive(cluster, target, VERSION, progress, partial, which, tally);
          // a live read may meet any mode: every one's code, as collect loaded it
          return { facts: read.facts, code: await loadModes(EVERY_MODE) };
        };
      const listServices = async () =>
        clusterView(await cluster.list({ path: '/api/v1/services' })).services;
      const invocation = invocationOf(g, o);
      const deadlines = { apiMs: 15_000, nodeMs: 1000 * (Number(o.nodeTimeout) || 60) };
      return await interactive(
        {
          start: 'diag',
          target,
          load: loadFor(target),
          loadFor,
          listServices,
          questions: asks,
          invocation,
          deadlines,
          ...(which.from ? { client: which.from } : {}),
        },
        g,
      );
    }
    // --all-nodes on a large cluster takes a while: the nodes read so far, on the terminal
    const status = statusLine();
    const { facts, suggestions, view } = await readLive(
      cluster,
      target,
      VERSION,
      timings?.progress,
      undefined,
      which,
      (t) => status.show(nodesText(t)),
    ).finally(() => status.done());
    timings?.phase('read');
    timings?.sizes(facts, cluster.api.bytesRead);
    tellNodeAccess(cluster.nodeAccess(), c);
    // a live read may meet any mode: every one's code, as collect loaded it
    const loaded = await loadModes(EVERY_MODE);
    const report = diagnose(facts, target, {
      suggestions,
      invocation: invocationOf(g, o),
      ...(view ? { analysis: new Analysis(facts, { view, code: loaded }) } : { code: loaded }),
      ...(which.from ? { client: which.from } : {}),
    });
    timings?.phase('diagnosed');
    const code = await writeReport(report, g, o);
    timings?.phase('written');
    return code;
  } finally {
    await closeLive(cluster, c);
    timings?.phase('closed');
  }
}

/** --nodes, --all-nodes, --max-nodes and --from, checked: names Kubernetes could have made. */
function nodeChoiceFlags(o: SvcOptions): NodeChoiceFlags {
  const out: NodeChoiceFlags = {};
  if (o.nodes !== undefined) {
    const names = o.nodes.split(',').filter(Boolean);
    const bad = names.find((n) => valid.name(n) === undefined);
    if (names.length === 0 || bad !== undefined)
      throw new UsageError(`--nodes ${JSON.stringify(o.nodes)}: give node names, comma-separated`);
    out.nodes = [...new Set(names)];
  }
  if (o.allNodes) {
    if (out.nodes) throw new UsageError('--nodes and --all-nodes: give one of them');
    out.all = true;
  }
  if (o.maxNodes !== undefined) {
    const n = Number(o.maxNodes);
    if (!Number.isInteger(n) || n < 1 || n > 100_000)
      throw new UsageError(`--max-nodes ${o.maxNodes}: give a whole number of nodes, 1 or more`);
    out.max = n;
  }
  if (o.nodeConcurrency !== undefined) {
    const n = Number(o.nodeConcurrency);
    if (!Number.isInteger(n) || n < 1 || n > 256)
      throw new UsageError(
        `--node-concurrency ${o.nodeConcurrency}: give a whole number from 1 to 256`,
      );
    out.concurrency = n;
  }
  if (o.from !== undefined) {
    const m = /^(pod|po|pods|node|no|nodes)\/(?:([^/]+)\/)?([^/]+)$/.exec(o.from);
    const kind = m?.[1]?.startsWith('po') ? 'pod' : 'node';
    if (
      !m ||
      valid.name(m[3]) === undefined ||
      (m[2] !== undefined && (kind === 'node' || valid.namespace(m[2]) === undefined))
    )
      throw new UsageError(
        `--from ${JSON.stringify(o.from)}: give pod/NAME, pod/NAMESPACE/NAME or node/NAME`,
      );
    out.from = { kind, ...(m[2] !== undefined ? { namespace: m[2] } : {}), name: m[3]! };
  }
  return out;
}

/** `kdebug svc`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    nodeAccessOptions(
      parent
        .command('svc [name]')
        // kubectl's names for the resource
        .aliases(['service', 'services'])
        .description('the guided diagnosis of one Service, step by step, with evidence')
        .option('--snapshot <dir>', 'a recorded snapshot directory instead of the live cluster')
        .option('-v, --verbose', 'text: expand every finding, not only the failing ones')
        .option('-A, --all-namespaces', 'find the Service by its name in every namespace')
        .option(
          '--from <kind/name>',
          'the client whose connection fails (pod/NAME or node/NAME): its node is read first',
        )
        .option('--nodes <names>', 'read these nodes only, comma-separated')
        .option(
          '--all-nodes',
          'read every node (a large cluster: by default the nodes that matter)',
        )
        .option('--max-nodes <n>', 'on a large cluster, read at most this many nodes (default 20)')
        .option(
          '--node-concurrency <n>',
          'nodes read at once, each with at most one debug Pod alive (default 8)',
        ),
    ),
    [
      'kdebug svc nginx-svc                          # current context and namespace',
      'kdebug svc shop/web --context prod -o json    # NS/NAME, like kubectl',
      'kdebug svc kube-dns:dns-tcp -n kube-system    # NAME:PORT: that port alone',
      'kdebug svc nginx-svc --snapshot DIR           # offline, from a snapshot',
      'kdebug svc web --from pod/client-7d9 --all-nodes  # its node first, then all',
    ],
  ).action((name: string | undefined, o: SvcOptions, cmd: Command) => {
    // a snapshot names the Service it was taken for; live, the name is required
    if (name === undefined && o.snapshot === undefined)
      cmd.error("error: missing required argument 'name'", {
        code: 'commander.missingArgument',
        exitCode: 2,
      });
    return run(svcCommand(name, o, g()));
  });
};

/** "nodes: 120 read, 3 failed, 4,877 left" */
const nodesText = (t: NodeTally) =>
  `nodes: ${thousands(t.read)} read, ${thousands(t.failed)} failed, ${thousands(t.left)} left`;
