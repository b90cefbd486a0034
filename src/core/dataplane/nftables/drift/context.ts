// What each comparison of nftables drift is given: the node, its table and listing, kube-proxy's
// model, where findings go, the lines not read.
import type { AddFinding as Add } from '../../drift.js';
import type { ExpectedRules } from '../../kube-proxy/expected.js';
import type { Release } from '../../kube-proxy/releases.js';
import type { NftTable, NftUnread } from '../read/listing.js';

export interface PortCheck {
  node: string;
  source: string;
  table: NftTable;
  exp: ExpectedRules;
  add: Add;
  /** The script's lines, printed when a finding quotes them. */
  script: () => string[];
  hairpin: Set<string>;
  release: Release;
  /** The lines of the listing not read that this comparison may rest on. */
  unread: NftUnread[];
  /** The first of them a Service port's comparison may rest on. */
  bearing: (service: string) => NftUnread | undefined;
}

export const keyText = (e: { key: (string | number)[] }) => e.key.join(' . ');
