// Masquerade in nftables mode, by what the table does and not by its spelling: before 1.36 a
// Service's chains jump to mark-for-masquerade, which sets the mark, and the masquerading chain
// (from nat-postrouting) masquerades what carries it; from 1.36 the mark is set inline. Each part
// is walked as the trace walks it (chain-walk.ts), so a rule spelled otherwise is no finding.
import { ipv4 } from '../../../ipv4.js';
import { ipv6 } from '../../../ipv6.js';
import { writes } from '../../kube-proxy/releases.js';
import type { PacketState } from '../../trace/packet.js';
import { hookChains, throughChains } from '../chain-walk.js';
import type { NftTable } from '../read/listing.js';
import { ruleAt, type PortCheck } from './context.js';
import { ruleText } from '../render.js';
import type { Quote } from '../../drift.js';

/** The chains whose rules this check judges by behaviour (fixed-chains.ts skips them). */
export const MASQUERADE_CHAINS = new Set(['mark-for-masquerade', 'masquerading']);

/** What breaks where the masquerade path does not work. */
const UNMASQUERADED =
  'Service traffic kube-proxy marks for SNAT (a Pod reaching itself through its Service, node ports, traffic from the node itself or from outside the cluster CIDR) is not masqueraded: replies take another path than the requests, and those connections hang';

/** What is wrong with the mark kube-proxy's chains set and the masquerade of what carries it:
 * one sentence per fault, none where the path works; undefined where the walk cannot say. */
export function masqueradeFaults(
  t: NftTable,
  mark: number,
  before36: boolean,
): string[] | undefined {
  const hex = `0x${mark.toString(16)}`;
  const out: string[] = [];
  if (before36) {
    const chain = t.chain('mark-for-masquerade');
    const marked = chain && throughChains(t, [chain], packet(t, 0));
    if (chain && !marked) return undefined;
    if (!chain) out.push('there is no chain mark-for-masquerade, which the Service chains jump to');
    else if ((marked!.pkt.mark & mark) !== mark)
      out.push(`mark-for-masquerade does not set the mark ${hex}`);
  }
  const post = hookChains(t, 'postrouting');
  const withMark = throughChains(t, post, packet(t, mark));
  const without = throughChains(t, post, packet(t, 0));
  if (!withMark || !without) return undefined;
  if (!withMark.pkt.snat) out.push(`nat-postrouting does not masquerade packets marked ${hex}`);
  else if (without.pkt.snat) out.push('nat-postrouting masquerades unmarked packets too');
  return out;
}

/** The finding where the table's masquerade path does not do what kube-proxy's does. */
export function masqueradePath(c: PortCheck): void {
  const before36 = !writes(c.release, 'nftInlineMasquerade');
  const faults = masqueradeFaults(c.table, c.exp.masqueradeMark, before36);
  if (!faults || faults.length === 0) return;
  const unmarkedToo = faults.some((f) => f.includes('unmarked'));
  const expected = c
    .script()
    .filter((l) =>
      /^add \w+ \w+ kube-proxy (mark-for-masquerade|masquerading|nat-postrouting) /.test(l),
    );
  const written = new Set(expected);
  c.add('masquerade-missing', {
    title: faults[0]!,
    message: `kube-proxy's table on ${c.node}: ${faults.join('; ')}. ${unmarkedToo ? 'Traffic that needs no SNAT is masqueraded as well: Pods see the node, not the client, as the source' : `${UNMASQUERADED}`}.`,
    expected,
    actual: [
      'nat-postrouting',
      'masquerading',
      ...(before36 ? ['mark-for-masquerade'] : []),
    ].flatMap((name): (string | Quote)[] => {
      const chain = c.table.chain(name);
      if (!chain) return [`${c.source}: no chain ${name}`];
      if (chain.rules.length === 0) return [`${c.source}: chain ${name}: no rules`];
      // a rule as kube-proxy's script writes it is context; one it does not write, the fault
      return chain.rules.map((r) =>
        ruleAt(
          c.source,
          r,
          written.has(`add rule ${c.table.family} kube-proxy ${name} ${ruleText(r)}`),
        ),
      );
    }),
  });
}

/** A new connection already DNATed, as it reaches postrouting, carrying `mark`; addresses of the
 * documentation ranges, in no set of kube-proxy's. */
function packet(t: NftTable, mark: number): PacketState {
  const v6 = t.family === 'ip6';
  const a = (x: string) => (v6 ? ipv6(`2001:db8::${x}`)! : ipv4(`192.0.2.${x}`)!);
  return {
    src: a('1'),
    dst: a('2'),
    sport: 40000,
    dport: 80,
    protocol: 'tcp',
    mark,
    dnat: true,
    snat: false,
  };
}
