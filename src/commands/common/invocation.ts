// How the person ran kdebug, for the "next" commands a report prints: the name it was invoked
// by (`kubectl kdebug` when kubectl ran it as its plugin), and the run's snapshot, context, --via.
import { basename } from 'node:path';
import type { Invocation } from '../../core/findings/next-command.js';
import type { GlobalOptions } from './io.js';

/** kubectl runs a plugin by its file name, kubectl-kdebug (krew and `npm install -g` install it). */
export const SELF: string[] = /^kubectl[-_]kdebug\b/.test(basename(process.argv[1] ?? ''))
  ? ['kubectl', 'kdebug']
  : ['kdebug'];

/** A kdebug command line in a message, by the name the person ran kdebug by. */
export const selfCommand = (rest: string) => `${SELF.join(' ')} ${rest}`;

export function invocationOf(
  g: GlobalOptions,
  o: { snapshot?: string; via?: string; image?: string; yes?: boolean } = {},
): Invocation {
  return {
    self: SELF,
    ...(o.snapshot !== undefined ? { snapshot: o.snapshot } : {}),
    ...(g.context !== undefined ? { context: g.context } : {}),
    ...(g.kubeconfig !== undefined ? { kubeconfig: g.kubeconfig } : {}),
    // a command for a node runs the image this run's debug Pods ran
    ...(o.image !== undefined ? { debugImage: o.image } : {}),
    ...(o.via !== undefined && o.via !== 'auto' ? { via: o.via } : {}),
    ...(o.yes ? { yes: true } : {}),
  };
}
