// Runs the commands on the nodes, a few nodes at a time and one command at a time on each: the
// reads each may run, the same read another way where the first failed, kube-proxy's backend
// where the default dump read the other, one Service's chains round by round and its IPVS state
// by address; what failed is folded by node, and the tally told as each node is done.
import { backendToRead, hasKubeChains, probeStem } from '../../core/dataplane/iptables/backend.js';
import {
  FAN_OUT,
  keepServiceRules,
  MOST_CHAINS,
  serviceChainReads,
  type IptablesTool,
} from '../../core/dataplane/iptables/service-chains.js';
import { chainStemPrefix } from '../../core/nodes/commands.js';
import { findService, type ClusterView } from '../../core/kube/objects.js';
import type { NodeOutputs } from '../../core/model.js';
import type { DataplaneCode } from '../../core/dataplane/modes.js';
import { NodeErrorFold, type NodeFailure } from '../../core/nodes/errors.js';
import { commandStem, type Cluster, type NodeCommand, type NodeResult } from '../cluster.js';
import { typedCommand } from '../nodes/commands.js';
import { isNodeName } from '../snapshot/files.js';
import {
  fallbackOf,
  IPVS_LOADED,
  isRulesDump,
  notRunWhy,
  readDecision,
  rulesReads,
} from './node-plan.js';
import { ipvsPlanner, readServiceIpvs, recordedAnswer, type NodeReadsIo } from './service-ipvs.js';
import type { CollectOptions, CollectProgress, NodeTally } from './options.js';

/** cat's own words for a file that is not there (GNU and busybox alike). */
const NO_SUCH_FILE = /No such file or directory/;

/** A kernel list that does not exist lists nothing: its module is not loaded. As an empty list
 * it says so; any other failure (no root, no cat) stays one. */
function listedNothing(c: NodeCommand, r: NodeResult): NodeResult {
  if (c.kind !== 'proc-net' || r.exitCode !== 1 || !NO_SUCH_FILE.test(r.stderr)) return r;
  return { ...r, stdout: '', exitCode: 0 };
}

/** iptables' words for a chain the table does not have: legacy's, and iptables-nft's (1.8.9
 * says "incompatible" for a chain that does not exist). */
const NO_SUCH_CHAIN =
  /No chain\/target\/match by that name|does not exist|is incompatible, use 'nft' tool/;

/** A chain read by name that the table does not have is an empty listing: nothing there. */
function chainAbsent(c: NodeCommand, r: NodeResult): NodeResult {
  if (c.kind !== 'iptables-chain' || r.exitCode !== 1 || !NO_SUCH_CHAIN.test(r.stderr)) return r;
  return { ...r, stdout: '', exitCode: 0 };
}

/** KUBE-SERVICES rules (Service ports, about) below which one Service's answer reads the whole
 * table: a table that small is read faster in one exec than chain by chain. */
const WHOLE_BELOW = 1000;

const lineCount = (text: string) => text.split('\n').length - 1;

/** Chain reads of one round that run at once on a node (each is its own exec or channel; sshd
 * allows 10 sessions on a connection by default). */
const CHAIN_READS_AT_ONCE = 8;

/** Whether a backend's probe found kube-proxy's KUBE-POSTROUTING (undefined: not read). */
function probed(outputs: NodeOutputs | undefined, tool: IptablesTool, backend: 'nft' | 'legacy') {
  const out = outputs?.[probeStem(tool, backend)];
  return out === undefined ? undefined : out !== '';
}

export async function runNodeCommands(
  cluster: Cluster,
  nodes: string[],
  commands: NodeCommand[],
  o: CollectOptions,
  progress: (p: CollectProgress) => void,
  byService?: {
    view: ClusterView;
    target: NonNullable<CollectOptions['rulesOf']>;
    code: DataplaneCode;
  },
  tally: NodeTally = { read: 0, failed: 0, left: 0 },
  fold = new NodeErrorFold(),
) {
  // keyed in a Map: a Node named "constructor" (valid, if hostile) is no key of every object
  const outputs = new Map<string, NodeOutputs>();
  // the failures of the nodes in hand; each node's go into the fold when it is done
  const failures = new Map<string, NodeFailure[]>();
  const errorsOn = (node: string) => {
    let on = failures.get(node);
    if (!on) failures.set(node, (on = []));
    return on;
  };
  /** Takes the failures that `test` picks off a node's list: read another way, no longer a loss. */
  const drop = (node: string, test: (e: NodeFailure) => boolean) => {
    const on = failures.get(node);
    if (on)
      failures.set(
        node,
        on.filter((e) => !test(e)),
      );
  };
  const notKept: NodeReads['notKept'] = {};
  const wholeWhy: NodeReads['wholeWhy'] = {};
  /** Why a node's rules were read whole after all, where one Service's were asked for. */
  const gaveWay = (node: string, why: string) => {
    wholeWhy[node] = wholeWhy[node] ? `${wholeWhy[node]}; ${why}` : why;
  };
  const planner = byService && ipvsPlanner(byService.view, byService.target, byService.code);
  /** One Service's IPVS state on a node, by address where it can be. */
  const readIpvs = async (node: string) => {
    const io: NodeReadsIo = {
      outputs: () => outputs.get(node),
      run: (c) => runChecked(node, c),
      inLanes: (reads) => inLanes(node, reads),
      failure: (stem) => failures.get(node)?.find((e) => e.command === stem),
      forget: (stems) => {
        const kept = outputs.get(node);
        if (kept) for (const stem of stems) delete kept[stem];
        drop(node, (e) => stems.has(e.command));
      },
    };
    const why = await readServiceIpvs(io, node, planner!);
    if (why) gaveWay(node, why);
  };
  // a name Kubernetes cannot have made is no node kdebug reaches (nor a path it writes)
  const queue = nodes.filter(isNodeName);
  for (const node of nodes.filter((n) => !isNodeName(n)))
    fold.add(node, [{ command: '*', exitCode: null, error: 'not a valid node name: not read' }]);
  tally.failed += nodes.length - queue.length;
  tally.left += queue.length;
  o.onNodes?.({ ...tally });
  const clock = () => (o.now?.() ?? new Date()).getTime();
  let shownAt = clock();
  // the nodes done with something read, for onNodeFacts only
  const done: string[] = [];
  const runOne = async (node: string, command: NodeCommand) => {
    const stem = commandStem(command);
    // progress names the command as a person types it on the node, not its file's stem
    const what = typedCommand(command).join(' ');
    progress({ what, node, state: 'start' });
    const r = recordedAnswer(
      command,
      chainAbsent(command, listedNothing(command, await cluster.run(node, command))),
    );
    // a failed dump is no dump: an empty one would read as "no rules in this backend"
    if (r.exitCode === 0 || (r.exitCode !== null && !isRulesDump(command)))
      outputs.set(node, { ...outputs.get(node), [stem]: r.stdout });
    if (r.exitCode === 0) {
      progress({ what, node, state: 'done' });
    } else {
      const error = r.error ?? (r.stderr.trim().split('\n')[0] || `exit code ${r.exitCode}`);
      errorsOn(node).push({
        command: stem,
        typed: typedCommand(command),
        read: command,
        exitCode: r.exitCode,
        error,
        ...(r.lost ? { lost: true } : {}),
        ...(r.missingBinary ? { missingBinary: true } : {}),
      });
      progress({ what, node, state: 'failed', error });
    }
  };
  const notRun = (node: string, command: NodeCommand) => {
    const error = notRunWhy(command);
    const typed = typedCommand(command);
    errorsOn(node).push({
      command: commandStem(command),
      typed,
      read: command,
      exitCode: null,
      error,
    });
    progress({ what: typed.join(' '), node, state: 'failed', error });
  };
  const runChecked = async (node: string, command: NodeCommand) => {
    const decision = readDecision(command, outputs.get(node));
    if (decision === 'unread') notRun(node, command);
    if (decision === 'run') await runOne(node, command);
  };
  /** Reads on one node, at most CHAIN_READS_AT_ONCE in flight, the next starting as one ends. */
  const inLanes = async (node: string, reads: NodeCommand[]) => {
    const queue = [...reads];
    const lane = async () => {
      for (let c = queue.shift(); c !== undefined; c = queue.shift()) await runChecked(node, c);
    };
    await Promise.all(Array.from({ length: CHAIN_READS_AT_ONCE }, lane));
  };
  /** A failed read as the reason a read by name gave way: the command and nft's or iptables' words. */
  const failedRead = (e: NodeFailure) => `${(e.typed ?? [e.command]).join(' ')}: ${e.error}`;
  /** The whole dumps, as every read but one Service's makes them. */
  const readWhole = async (node: string, tool: IptablesTool) => {
    delete notKept[node]; // the whole dump is what is read there
    for (const c of rulesReads(`${tool}-save`).dumps) await runChecked(node, c);
    // nft's nat dump says again what its probe could not read
    const probe = probeStem(tool, 'nft');
    drop(node, (e) => e.command === probe);
  };
  /** After a backend's probe: one Service's chains by name where nft alone holds kube-proxy's
   * (iptables-nft, as kube-proxy's image picks on current nodes), else the whole dumps as before. */
  const afterProbe = async (node: string, tool: IptablesTool, backend: 'nft' | 'legacy') => {
    const nft = probed(outputs.get(node), tool, 'nft');
    if (backend === 'nft') return nft ? readServiceChains(node, tool) : readWhole(node, tool);
    const probe = { kind: 'iptables-chain', tool, backend, chain: 'KUBE-POSTROUTING' } as const;
    // the probe ran and failed (sudo allows the save binaries only): legacy's nat table, as before
    const refused =
      probed(outputs.get(node), tool, 'legacy') === undefined &&
      readDecision(probe, outputs.get(node)) === 'run';
    const nat = { kind: `${tool}-save`, backend: 'legacy', table: 'nat' } as const;
    if (refused) await runChecked(node, nat);
    const legacy =
      probed(outputs.get(node), tool, 'legacy') ||
      hasKubeChains(outputs.get(node)?.[commandStem(nat)] ?? '');
    // both backends hold them: one set is stale, and the default iptables-save reads the one
    // kube-proxy's wrapper picks
    if (nft && legacy) await readWhole(node, tool);
  };
  /** One Service's chains in the nft backend, round after round until its rules reach no chain
   * not read; the whole dump where they are too many or a read by name fails. */
  const readServiceChains = async (node: string, tool: IptablesTool) => {
    const { view, target } = byService!;
    const save = `${tool}-save` as const;
    const backend = 'nft';
    // the chains read by name, the backend's probe aside (it says which backend holds them)
    const chainStem = (stem: string) =>
      stem !== probeStem(tool, backend) &&
      (stem.startsWith(chainStemPrefix(tool, backend)) ||
        stem.startsWith(chainStemPrefix(tool, backend, 'filter')));
    const chainError = () => (failures.get(node) ?? []).find((e) => chainStem(e.command));
    // KUBE-SERVICES sizes the table; the chains every answer reads go with it in the first round
    const services = { kind: 'iptables-chain', tool, backend, chain: 'KUBE-SERVICES' } as const;
    const first = serviceChainReads(view, target, outputs.get(node), tool, backend);
    await inLanes(node, [
      services,
      ...(first === 'whole' ? [] : first.filter((c) => commandStem(c) !== commandStem(services))),
    ]);
    const listed = outputs.get(node)?.[commandStem(services)];
    if (listed !== undefined && lineCount(listed) < (target.wholeBelow ?? WHOLE_BELOW)) {
      await runChecked(node, { kind: save, backend });
      // the table is read whole: the chains read beside it stand for nothing more
      const kept = outputs.get(node)!;
      if (kept[commandStem({ kind: save, backend })] !== undefined) {
        for (const stem of Object.keys(kept)) if (chainStem(stem)) delete kept[stem];
        drop(node, (e) => chainStem(e.command));
      }
      return;
    }
    for (;;) {
      const next = serviceChainReads(view, target, outputs.get(node), tool, backend);
      if (next !== 'whole' && next.length === 0) return keepOnlyTheService(node, tool, backend);
      if (next !== 'whole') {
        await inLanes(node, next);
        const failed = chainError();
        if (!failed) continue;
        gaveWay(node, failedRead(failed));
      } else gaveWay(node, `${tool}: the Service reaches more than ${MOST_CHAINS} chains`);
      await runOne(node, { kind: save, backend });
      // read whole: the reads by name that failed are no longer a loss
      if (outputs.get(node)?.[commandStem({ kind: save, backend })] !== undefined)
        drop(node, (e) => chainStem(e.command));
      return;
    }
  };
  /** Every chain the Service reaches is read: the entry chains keep its rules and those of no
   * Service, so what a node holds grows with the Service, not with the cluster (said, counted). */
  const keepOnlyTheService = (node: string, tool: IptablesTool, backend: 'nft') => {
    const svc = findService(byService!.view, byService!.target.namespace, byService!.target.name);
    const kept = outputs.get(node);
    if (!svc || !kept) return;
    for (const chain of FAN_OUT) {
      const stem = commandStem({ kind: 'iptables-chain', tool, backend, chain });
      const text = kept[stem];
      if (text === undefined) continue;
      const { text: own, dropped } = keepServiceRules(text, svc);
      if (dropped === 0) continue;
      kept[stem] = own;
      // IPv4's and IPv6's entry chains add up
      notKept[node] = { ...notKept[node], [chain]: (notKept[node]?.[chain] ?? 0) + dropped };
    }
  };
  const worker = async () => {
    for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
      // one command at a time per node: kinder to the node and to the transport's session
      for (const command of commands) {
        // a second read of what the node could not read the first time would fail the same way
        if (
          command.kind === 'conntrack-stats' &&
          command.again &&
          outputs.get(node)?.['conntrack-stats'] === undefined
        )
          continue;
        await runChecked(node, command);
        // a backend's probe is in: the rules next, before the reads a kube-proxy image may lack
        if (byService && command.kind === 'iptables-chain' && command.backend !== 'auto')
          await afterProbe(node, command.tool, command.backend);
        // whether IPVS is loaded is in: the Service's virtual servers and ipset entries next
        if (byService && commandStem(command) === commandStem(IPVS_LOADED)) await readIpvs(node);
      }
      // the default iptables-save reads the other backend: read the one with kube-proxy's chains
      const backend = backendToRead(outputs.get(node));
      if (backend) await runOne(node, { kind: 'iptables-save', backend });
      // the same for the IPv6 proxier's rules, where they are read
      const backend6 = backendToRead(outputs.get(node), 'ip6tables');
      if (
        backend6 &&
        commands.some(
          (c) =>
            c.kind === 'ip6tables-save' || (c.kind === 'iptables-chain' && c.tool === 'ip6tables'),
        )
      )
        await runOne(node, { kind: 'ip6tables-save', backend: backend6 });
      // an nft built without JSON still lists the table as text; a node without ipvsadm-save
      // still has ipvsadm
      for (const c of commands) {
        const other = fallbackOf(c);
        if (!other) continue;
        const stem = commandStem(c);
        // it ran and failed (not one the transport could not make), or its binary is not there
        const failed = failures
          .get(node)
          ?.find((e) => e.command === stem && (e.exitCode !== null || e.missingBinary));
        if (!failed) continue;
        await runOne(node, other);
        // read the other way: the first attempt's failure is no longer a loss
        if (outputs.get(node)?.[commandStem(other)] !== undefined) drop(node, (e) => e === failed);
      }
      // nothing more runs there: its debug Pod goes now, so no more are alive than nodes in hand
      await cluster.nodeDone?.(node);
      // what failed there joins the nodes that failed the same way: only its name is kept
      fold.add(node, failures.get(node) ?? []);
      failures.delete(node);
      tally.left--;
      if (outputs.has(node)) tally.read++;
      else tally.failed++;
      o.onNodes?.({ ...tally });
      if (o.onNodeFacts && outputs.has(node)) done.push(node);
      // the nodes done only: one still being read would show half its state
      if (o.onNodeFacts && tally.left > 0 && clock() - shownAt >= 1000) {
        shownAt = clock();
        o.onNodeFacts(Object.fromEntries(done.map((n) => [n, outputs.get(n)!])));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.nodeConcurrency ?? 8, nodes.length) }, worker));
  return { outputs: Object.fromEntries(outputs), notKept, wholeWhy };
}

/** What the nodes gave: their outputs, and per node and entry chain how many rules of other
 * Services were not kept (one Service's answer); what failed is in the run's NodeErrorFold. */
export interface NodeReads {
  outputs: Record<string, NodeOutputs>;
  notKept: Record<string, Record<string, number>>;
  /** Per node, why its rules were read whole where only one Service's were asked for. */
  wholeWhy: Record<string, string>;
}
