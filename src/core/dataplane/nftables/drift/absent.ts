// Which of the commands kube-proxy writes for a Service port the node's table lacks: a finding
// quotes only these as missing, never a chain, element or rule the table still holds.
import type { NftCommand } from '../expected/script.js';
import { scriptTable } from '../expected/script.js';
import type { NftTable } from '../read/listing.js';
import { keyText } from './context.js';
import { signature } from './rule-signature.js';

export function absentFrom(t: NftTable, commands: NftCommand[]): NftCommand[] {
  // each rule of the table stands for one rule of the script: two alike need two
  const unmatched = new Map<string, string[]>();
  const rulesOf = (chain: string) => {
    let left = unmatched.get(chain);
    if (!left) unmatched.set(chain, (left = (t.chain(chain)?.rules ?? []).map(signature)));
    return left;
  };
  return commands.filter((c) => {
    if (c.add === 'chain') return !t.chain(c.name);
    if (c.add === 'element') {
      const key = keyText(c.element);
      return !t
        .set(c.set)
        ?.elements.some(
          (e) => keyText(e) === key && e.verdict?.target === c.element.verdict?.target,
        );
    }
    if (c.add !== 'rule') return false;
    const left = rulesOf(c.chain);
    const i = left.indexOf(signature(scriptTable([c], t.family).chains[0]!.rules[0]!));
    if (i >= 0) left.splice(i, 1);
    return i < 0;
  });
}
