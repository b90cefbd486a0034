// Step 9: externalTrafficPolicy / internalTrafficPolicy Local. Local keeps the client's source
// IP (or keeps traffic on its node) by using only the node's own endpoints: a node without one
// drops the traffic (./local.ts); policy Cluster forwards to any ready endpoint (./cluster.ts).
import { type Check, pending } from '../check.js';
import { cluster, externallyAccessible } from './cluster.js';
import { external, internal } from './local.js';

export const trafficPolicyCheck: Check<'traffic-policy'> = {
  id: 'traffic-policy',
  title: 'Traffic policy',
  needs: ['service'],
  skipFor: {
    kinds: ['ExternalName', 'headless'],
    id: 'traffic-policy-not-used',
    title: 'no virtual IP, no traffic policy',
    explanation: 'Traffic policies apply to the ClusterIP and node ports that kube-proxy programs.',
  },
  run(ctx) {
    const svc = ctx.service!;
    if (ctx.waiting('objects')) return pending('reading the Nodes and EndpointSlices');
    const etpLocal = svc.externalTrafficPolicy === 'Local' && externallyAccessible(svc);
    const itpLocal = svc.internalTrafficPolicy === 'Local';
    const out = [...(etpLocal ? external(ctx, svc) : []), ...(itpLocal ? internal(ctx, svc) : [])];
    if (out.length > 0) return out;
    // policy Cluster rests on the nodes' rules: pending while they are read
    return ctx.waiting('nodes') ? pending('waiting for the node rules') : cluster(ctx, svc);
  },
};
