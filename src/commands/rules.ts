// `kdebug rules`: the Service trees of one node's rules (a file, stdin, a host over SSH, a
// snapshot's node or the live cluster's), as text, JSON, a search, or the TUI.
import { loadModes, NO_MODE } from '../core/dataplane/modes.js';
import { Analysis } from '../core/nodes/analysis.js';
import { recordedFamily } from '../core/facts/facts.js';
import { parseIptables, TABLES } from '../core/dataplane/iptables/read/parse.js';
import {
  linesFrom,
  nftPasteTrees,
  pasteForm,
  readNftPaste,
  withMapPorts,
} from '../core/dataplane/paste/paste.js';
import { buildNftPasteSearchIndex } from '../core/dataplane/nftables/search.js';
import type { ServiceTrees } from '../core/dataplane/trees.js';
import type { Facts } from '../core/model.js';
import { treeSearchIndex } from '../core/dataplane/search/tree-docs.js';
import { buildSearchIndex } from '../core/dataplane/iptables/search.js';
import { readIpvsPaste } from '../core/dataplane/ipvs/read/pasted-ipsets.js';
import { outputLimitBytes } from '../core/facts/not-read.js';
import { pickNodes, readFacts, sshRulesText, type SourceFlags } from '../cluster/facts-source.js';
import { parseCilium } from '../core/dataplane/cilium/read/read.js';
import {
  mayHoldSources,
  pasteSources,
  sourcesSaid,
  type PasteSources,
} from '../core/dataplane/paste/sources.js';
import { buildCiliumTrees } from '../core/dataplane/cilium/trees.js';
import {
  rulesDoc,
  rulesText,
  searchDoc,
  searchText,
  type RulesDump,
  type RulesSource,
} from '../output/rules.js';
import {
  dumpFile,
  EXIT,
  tell,
  format,
  readInput,
  sourceContext,
  UsageError,
  textWidth,
  write,
  writeDoc,
  type GlobalOptions,
} from './common/io.js';
import { interactive } from './common/tui.js';
import { nodeAccessOptions, withExamples, type Define } from './common/flags.js';
import { Option } from 'commander';
import { decodedText, inputBytes } from '../core/facts/input-text.js';

export interface RulesOptions extends SourceFlags {
  file?: string;
  table?: string;
  search?: string;
}

/** The one dump of --file or --ssh: its bytes as read, its name in messages and parse errors. */
interface GivenDump {
  bytes: Uint8Array | string;
  label: string;
  file: string;
  /** A paste of several hosts' or files' output: which was read. */
  sources?: PasteSources;
}

/** A given dump as text. */
const textOf = (d: GivenDump): string =>
  typeof d.bytes === 'string' ? d.bytes : Buffer.from(d.bytes).toString('utf8');

/** What a given dump's trees are said to be of: "file PATH", or where --ssh read it. */
const shownLabel = (o: RulesOptions, d: GivenDump): string =>
  o.file !== undefined ? `file ${d.label}` : d.label;

/** Where a given dump's text says it came from: a paste (--file), or a node's dump (--ssh). */
const givenSource = (o: RulesOptions, d: GivenDump): RulesSource => ({
  label: shownLabel(o, d),
  file: d.file,
  ...(o.file === undefined ? { held: 'dump' as const } : {}),
  ...(d.sources
    ? {
        warnings: [{ line: d.sources.lines[0]!, kind: 'sources', message: sourcesSaid(d.sources) }],
      }
    : {}),
});

/** The one dump of --file or --ssh, read as it was given. */
async function givenDump(o: RulesOptions, g: GlobalOptions): Promise<GivenDump> {
  if (o.file !== undefined) {
    const label = o.file === '-' ? '<stdin>' : o.file;
    // a pasted dump is held to what a node's may print
    const limit = o.maxOutputMib === undefined ? undefined : outputLimitBytes(o.maxOutputMib);
    const read = inputBytes(await readInput(o.file, limit));
    const decoded = decodedText(read.marked);
    if (decoded) tell(`warning: ${label}: ${decoded}`);
    return { bytes: read.bytes, label, file: label };
  }
  const r = await sshRulesText(o.ssh!, o, sourceContext(g));
  return { ...r, bytes: r.text };
}

export async function rulesCommand(o: RulesOptions, g: GlobalOptions): Promise<number> {
  if ([o.file, o.snapshot, o.ssh].filter((x) => x !== undefined).length > 1)
    throw new UsageError('give one of --file, --snapshot or --ssh');
  const shown = format(g, 'rules');
  const common = { start: 'rules' as const, node: o.node, search: o.search };
  if (o.file !== undefined || o.ssh !== undefined) {
    const given = await givenDump(o, g);
    const head =
      typeof given.bytes === 'string'
        ? given.bytes.slice(0, 4096)
        : Buffer.from(given.bytes.subarray(0, 4096)).toString('utf8');
    // a NUL byte: an executable, an archive, a core dump; no listing any tool prints has one
    if (head.includes('\u0000'))
      throw new UsageError(
        `${given.label}: a binary file, not a listing: give the text iptables-save, nft list table ip kube-proxy, ipvsadm -Ln or cilium-dbg service list prints`,
      );
    // several hosts' or files' output: the first read, the others named
    const sources =
      o.file !== undefined && mayHoldSources(head) ? pasteSources(textOf(given)) : undefined;
    if (sources && shown === 'tui') tell(`warning: ${given.file}: ${sourcesSaid(sources)}`);
    const one = sources ? { ...given, bytes: sources.text, sources } : given;
    // the head already decoded, unless only the first source's lines are left
    const oneHead = sources ? sources.text.slice(0, 4096) : head;
    const { kind, from } = pasteForm(oneHead, () => textOf(one));
    // Cilium's status above another tool's listing: its lines are blank for that tool's reader
    const d = from === undefined ? one : { ...one, bytes: linesFrom(textOf(one), from) };
    if (kind === 'nftables') return nftRules(o, shown, d, g);
    if (kind === 'ipvs') return ipvsRules(o, shown, d);
    if (kind === 'cilium') return ciliumRules(o, shown, d);
    // input kdebug cannot read at all is said before a screen opens, as in text mode
    // the bytes as read: a text would be encoded again for the parser
    const source = o.file === '-' ? 'pipe' : o.file !== undefined ? 'file' : undefined;
    const ruleset = withMapPorts(
      () => textOf(d),
      () => parseIptables(d.bytes, { file: d.file, table: o.table, source }),
    );
    if (shown === 'tui') {
      // one dump, no objects: the screens that need the cluster say so
      const text = textOf(d);
      const rules = { label: d.label, text, table: o.table, ruleset };
      const facts = { facts: { objects: [], nodes: {}, meta: {} }, code: NO_MODE };
      return interactive({ ...common, facts, rules, load: async () => facts }, g);
    }
    // an iptables dump alone: no other mode's code
    const none = new Analysis({ objects: [], nodes: {}, meta: {} }, { code: NO_MODE });
    const node = none.node(d.label, { source: d.label, ruleset });
    return print(o, shown, ruleset, node.trees()!, givenSource(o, d));
  }
  // a snapshot's node, or without one the live cluster's (read again on ctrl-r in the TUI)
  const source = await readFacts(o, sourceContext(g), { rules: true });
  if (shown === 'tui') {
    if (o.node !== undefined && o.snapshot !== undefined)
      pickNodes(source.facts, source.label, o, 'recorded rules');
    const load = () => readFacts(o, sourceContext(g), { rules: true });
    const snapshot = o.snapshot !== undefined ? `snapshot ${o.snapshot}` : undefined;
    return interactive({ ...common, facts: source, load, snapshot }, g);
  }
  const [name] = pickNodes(source.facts, source.label, o, 'recorded rules');
  const fileOf = dumpFile(o);
  // a node that recorded only ip6tables-save shows those
  const { view, code } = source;
  const node = new Analysis(source.facts, { view, code, fileOf, table: o.table }).node(
    name!,
    undefined,
    recordedFamily(source.facts, name!),
  );
  const dataplane = node.dataplane();
  const at = (dump: string) => ({
    label: `node ${name}`,
    node: name,
    file: fileOf(name!, dump),
    held: 'dump' as const,
  });
  if (dataplane?.mode === 'nftables' || dataplane?.mode === 'ipvs' || dataplane?.mode === 'cilium')
    return print(o, shown, dataplane.table, node.trees()!, at(node.stateRead()!.source));
  const rs = node.ruleset();
  return print(o, shown, rs, node.trees()!, at(node.rules()!.source));
}

/** `nft [-j] list table ip kube-proxy` (or `list ruleset`) output: kube-proxy's nftables table
 * as Service trees. */
function nftRules(
  o: RulesOptions,
  shown: string,
  d: GivenDump,
  g: GlobalOptions,
): Promise<number> | number {
  const text = textOf(d);
  const nft = readNftPaste(text, d.file);
  if ('notKubeProxy' in nft) throw new UsageError(nft.notKubeProxy);
  const { table, skipped, notes } = nft;
  tellSkipped(skipped, d.file, 'an nft table');
  if (shown === 'tui') {
    // text and JSON carry the notes among their warnings; the TUI is told them here
    for (const note of notes) tell(`warning: ${d.file}: ${note}`);
    // one table, no objects: the screens that need the cluster say so
    const empty: Facts = { objects: [], nodes: {}, meta: {} };
    const rules = { label: d.label, text, nft: table };
    // the screens read the table through nftables' Dataplane, loaded with its mode
    return loadModes(['nftables']).then((code) => {
      const facts = { facts: empty, code };
      return interactive(
        { start: 'rules', node: o.node, search: o.search, facts, rules, load: async () => facts },
        g,
      );
    });
  }
  return print(o, shown, table, nftPasteTrees(table), givenSource(o, d));
}

/** `ipvsadm -Ln` or `ipvsadm-save -n` output: IPVS mode's virtual servers as Service trees. */
function ipvsRules(o: RulesOptions, shown: string, d: GivenDump): number {
  if (shown === 'tui')
    throw new UsageError('the TUI does not show IPVS listings yet: use -o text or -o json');
  const text = textOf(d);
  const { dump: table, trees } = readIpvsPaste(text, d.file);
  // iptables rules and kubectl's output pasted with it are said of in its warnings, as what they are
  const iptables = new Set([...(table.iptablesLines ?? []), ...(table.kubectlLines ?? [])]);
  tellSkipped(
    table.skipped.filter((l) => !iptables.has(l)),
    d.file,
    'an ipvsadm listing',
  );
  return print(o, shown, table, trees, givenSource(o, d));
}

/** A Cilium agent's listing (service list, bpf lb list, db/show frontends): its frontends as
 * Service trees. */
function ciliumRules(o: RulesOptions, shown: string, d: GivenDump): number {
  if (shown === 'tui')
    throw new UsageError(
      'the TUI does not show a pasted Cilium listing yet: use -o text or -o json',
    );
  const text = textOf(d);
  const table = parseCilium(text, d.file);
  return print(o, shown, table, buildCiliumTrees(table, new Map()), givenSource(o, d));
}

/** Says which lines around a pasted listing were skipped (a prompt, the command, prose). */
function tellSkipped(skipped: number[], file: string, what: string): void {
  if (skipped.length === 0) return;
  const more = skipped.length > 10 ? ` and ${skipped.length - 10} more` : '';
  tell(
    `warning: skipped ${skipped.length === 1 ? 'line' : 'lines'} ${skipped.slice(0, 10).join(', ')}${more} of ${file}: not part of ${what} (a prompt, a command, prose)`,
  );
}

/** The rules as trees, or what --search finds in them, as text or JSON. */
function print(
  o: RulesOptions,
  shown: string,
  rs: RulesDump,
  trees: ServiceTrees,
  source: RulesSource,
): number {
  const json = shown === 'json';
  if (o.search !== undefined) {
    const index =
      'frontends' in rs
        ? treeSearchIndex(trees, 'cilium')
        : 'kind' in rs
          ? treeSearchIndex(trees, 'ipvs')
          : 'family' in rs
            ? buildNftPasteSearchIndex(rs, trees)
            : buildSearchIndex(rs, trees);
    const hits = index.search(o.search);
    if (json) writeDoc(searchDoc(o.search, hits));
    else write(searchText(o.search, hits, textWidth().width));
  } else if (json) writeDoc(rulesDoc(rs, trees, source));
  else write(rulesText(rs, trees, source, textWidth().width));
  return EXIT.ok;
}

/** `kdebug rules`: its flags, help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    nodeAccessOptions(
      parent
        .command('rules')
        .description("the Service -> KUBE-SVC -> KUBE-SEP -> DNAT trees of a node's rules")
        .option('--file <path>', 'iptables-save or iptables -S output ("-" for stdin)')
        .option('--snapshot <dir>', 'a recorded snapshot directory (default: the live cluster)')
        .option('--node <node>', 'the node whose rules to read')
        .addOption(
          new Option(
            '--table <table>',
            'the table of iptables -S output without *table lines',
          ).choices(TABLES),
        )
        .option('--search <query>', 'fuzzy search chains, comments, IPs, ports and Service names')
        .option(
          '--ssh <[user@]host[:port]>',
          "read this host's rules over SSH (no cluster needed)",
        ),
    ),
    [
      'sudo iptables-save | kdebug rules --file -',
      'kdebug rules --snapshot DIR --node node-a --search 10.244.1.7',
      'kdebug rules --ssh root@192.0.2.10',
    ],
  ).action((o: RulesOptions) => run(rulesCommand(o, g())));
};
