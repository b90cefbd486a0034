// `kdebug trace`: one packet walked through a node's rules, every outcome with its chance.
import { Analysis } from '../core/analysis.js';
import { isIPv4 } from '../core/ipv4.js';
import type { TraceProtocol } from '../core/trace.js';
import { traceAnswer } from '../core/trace/answer.js';
import {
  pickNodes,
  readFacts,
  readNodeOverSsh,
  type SourceFlags,
} from '../cluster/facts-source.js';
import { traceJson, traceText } from '../output/trace.js';
import {
  dumpFile,
  EXIT,
  format,
  sourceContext,
  UsageError,
  write,
  type GlobalOptions,
} from './io.js';

export interface TraceOptions extends SourceFlags {
  src?: string;
  dst?: string;
  proto: TraceProtocol;
  fromHost?: boolean;
}

export async function traceCommand(o: TraceOptions, g: GlobalOptions): Promise<number> {
  const shown = format(g, 'trace'); // a refused -o before anything is read
  const m = /^([^:]+)(?::(\d+))?$/.exec(o.dst ?? '');
  if (!m || !isIPv4(m[1]!)) throw new UsageError('give the destination as --dst IP:PORT (IPv4)');
  if (o.proto !== 'icmp' && m[2] === undefined)
    throw new UsageError(`--dst needs a port for ${o.proto}: IP:PORT`);
  if (o.ssh !== undefined && o.snapshot === undefined)
    throw new UsageError('--ssh takes the objects from a snapshot: give --snapshot DIR too');
  const c = sourceContext(g);
  const { facts, label } = await readFacts(o, c, { rules: o.ssh === undefined });
  const ssh =
    o.ssh !== undefined ? await readNodeOverSsh(facts, label, { ...o, ssh: o.ssh }, c) : undefined;
  const [name] = pickNodes(facts, label, { node: ssh?.node ?? o.node }, 'recorded rules');
  const analysis = new Analysis(facts, { fileOf: dumpFile(o) });
  const node = analysis.node(name!);
  node.ruleset(); // an unreadable dump is said before the source address is asked for
  const nodeIP = analysis.view.nodes.find((n) => n.name === name)?.ips[0];
  const src = o.src ?? (o.fromHost ? nodeIP : undefined);
  if (src === undefined || !isIPv4(src))
    throw new UsageError(
      o.src === undefined
        ? 'give the source: --src IP (a Pod IP, or a client outside the cluster; with --from-host it defaults to the node IP)'
        : `--src ${o.src} is not an IPv4 address`,
    );
  const result = node.trace({
    src,
    dst: m[1]!,
    dport: m[2] ? Number(m[2]) : undefined,
    protocol: o.proto,
    fromHost: !!o.fromHost,
  });
  const answer = traceAnswer(result, analysis.view, name!);
  write(shown === 'json' ? traceJson(answer) : traceText(answer));
  return answer.blocked ? EXIT.problem : EXIT.ok;
}
