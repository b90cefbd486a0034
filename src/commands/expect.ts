// `kdebug expect`: the rules kube-proxy would write on one node, as iptables-save text.
import { Analysis } from '../core/analysis.js';
import { expectedSave } from '../core/expected.js';
import { pickNodes, readFacts, type SourceFlags } from '../cluster/facts-source.js';
import { EXIT, format, sourceContext, UsageError, write, type GlobalOptions } from './io.js';

export interface ExpectOptions extends SourceFlags {
  table?: 'nat' | 'filter';
  randomFully: boolean;
  nfacct?: boolean;
  tcpBeLiberal?: boolean;
}

export async function expectCommand(o: ExpectOptions, g: GlobalOptions): Promise<number> {
  format(g, 'expect');
  const { facts, label } = await readFacts(o, sourceContext(g), { rules: false });
  const [name] = pickNodes(facts, label, o, 'known');
  const node = new Analysis(facts).node(name!);
  // the rules of another mode would be kube-proxy's in no sense: say so rather than print them
  if (node.mode() !== 'iptables')
    throw new UsageError(
      `node ${name}: kube-proxy runs in ${node.mode()} mode; expect prints the rules of iptables mode only (${node.mode() === 'nftables' ? 'kdebug rules and drift read its nftables table' : 'kdebug rules reads what it can of it'})`,
    );
  // a flag given on the command line wins over what the node's recordings tell
  const exp = node.expected(undefined, {
    ...(o.randomFully === false ? { randomFully: false } : {}),
    ...(o.nfacct !== undefined ? { nfacct: o.nfacct } : {}),
    ...(o.tcpBeLiberal !== undefined ? { conntrackTcpBeLiberal: o.tcpBeLiberal } : {}),
  });
  const notes = o.nfacct === undefined ? [...exp.notes, ...node.knobs().notes] : exp.notes;
  write(expectedSave({ ...exp, notes }, { tables: o.table ? [o.table] : undefined }));
  return EXIT.ok;
}
