// Who programs the Service on a node, as its node state says: kube-proxy, Cilium's agent (one
// with a Pod, or one known only from its recorded status), or, on a node of a Cilium cluster with
// neither an agent Pod nor a kube-proxy Pod in the API, nothing known. The policy's sentences name
// that, never kube-proxy on a node it does not run on.
import { listFew } from '../check.js';
import type { CheckContext } from '../context.js';
import { modeTraits } from '../../dataplane/mode-traits.js';

type Proxy = 'kube-proxy' | 'cilium' | 'cilium-recorded' | 'none-known';

function proxyOn(ctx: CheckContext, node: string): Proxy {
  const state = ctx.analysis.state(node);
  // a mode kdebug does not model is kube-proxy's (userspace, kernelspace)
  if (modeTraits(state.mode.value)?.programmedBy !== 'cilium-agent') return 'kube-proxy';
  if (!state.agentMissing) return 'cilium';
  return state.agentMissing.ran ? 'cilium-recorded' : 'none-known';
}

/** `nodes` by what programs the Service there, in a fixed order. */
function byProxy(ctx: CheckContext, nodes: readonly string[]): [Proxy, string[]][] {
  const order: Proxy[] = ['kube-proxy', 'cilium', 'cilium-recorded', 'none-known'];
  return order
    .map((p): [Proxy, string[]] => [p, nodes.filter((n) => proxyOn(ctx, n) === p)])
    .filter(([, ns]) => ns.length > 0);
}

/** Who would do `verb` (a plural verb phrase: "send the ClusterIP traffic to ...") on `nodes`,
 * one clause per kind of proxy: "kube-proxy on a would ...; Cilium's agent on b would ...". */
export function wouldOn(ctx: CheckContext, nodes: readonly string[], verb: string): string {
  const text = byProxy(ctx, nodes)
    .map(([p, ns]) => {
      const on = listFew(ns);
      switch (p) {
        case 'kube-proxy':
          return `kube-proxy on ${on} would ${verb}`;
        case 'cilium':
          return `Cilium's agent on ${on} would ${verb}`;
        case 'cilium-recorded':
          return `Cilium's agent recorded on ${on} (no Pod of it in the API) would ${verb}`;
        case 'none-known':
          return `on ${on} the API holds neither a Cilium agent Pod nor a kube-proxy Pod, so nothing is known to ${verb} (the kube-proxy step says so)`;
      }
    })
    .join('; ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** What a node without a local endpoint does with traffic its Local policy keeps on the node, by
 * what programs it there (`now`: as its state shows; else what it would do): kube-proxy's DROP
 * rule (`kubeProxy`, worded by the caller), Cilium's frontend with no backend. */
export function localDrops(
  ctx: CheckContext,
  nodes: readonly string[],
  what: string,
  kubeProxy: (nodes: string[]) => string,
  now: boolean,
): string {
  return byProxy(ctx, nodes)
    .map(([p, ns]) => {
      const on = listFew(ns);
      switch (p) {
        case 'kube-proxy':
          return kubeProxy(ns);
        case 'cilium':
        case 'cilium-recorded':
          // an empty frontend answers as service-no-backend-response says (reject by default)
          return `Cilium's agent on ${on} ${now ? 'holds' : 'would hold'} ${what} with no backend, so new connections to it are not forwarded (rejected or dropped, as its service-no-backend-response says)`;
        case 'none-known':
          return `on ${on} nothing is known to program ${what} (no Cilium agent Pod, no kube-proxy Pod in the API)`;
      }
    })
    .join('; ');
}

/** The proxies of `nodes` as a sentence names them: "kube-proxy", "Cilium's agent", or both. */
export function proxiesOf(ctx: CheckContext, nodes: readonly string[]): string {
  const kinds = new Set(byProxy(ctx, nodes).map(([p]) => (p === 'kube-proxy' ? p : 'cilium')));
  return [...kinds]
    .map((k) => (k === 'kube-proxy' ? 'kube-proxy' : "Cilium's agent"))
    .join(' and ');
}
