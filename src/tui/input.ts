// What the TUI is started with: how to read the facts (and again on ctrl-r), what to show first,
// and the questions to ask before acting on the cluster.
import type { CollectProgress } from '../cluster/collect.js';
import type { DiagnosedService } from '../core/diagnose.js';
import type { Service } from '../core/kube/objects.js';
import type { Analysis } from '../core/nodes/analysis.js';
import type { AnalyzeOptions, CodedFacts } from './data.js';
import type { ScreenName } from './keymap.js';
import type { Questions } from './questions.js';

/** Hands over the facts read so far (the API objects before the node commands, say). */
export type PartialFacts = (facts: CodedFacts, collecting: AnalyzeOptions['collecting']) => void;

export interface TuiInput extends AnalyzeOptions {
  /**
   * Reads the facts (again, on ctrl-r); progress says what is being read, and `partial` may
   * hand over the facts read so far (the API objects before the node commands, say).
   */
  load: (progress: (p: CollectProgress) => void, partial: PartialFacts) => Promise<CodedFacts>;
  /** Facts already read (or analysed: their dumps parsed aside): the first frame shows them
   * without waiting. */
  facts?: CodedFacts | Analysis;
  start: ScreenName;
  /** The node to show first on the Rules screen. */
  node?: string;
  /** Start with the search open on this query (`rules --search`). */
  search?: string;
  /** Questions to ask before acting on the cluster (creating debug Pods). */
  questions?: Questions;
  /** Replaying a snapshot: how the header names it ("snapshot DIR") instead of a context. */
  snapshot?: string;
  /** How long each read may take before it gives up (the footer says so while waiting). */
  deadlines?: { apiMs: number; nodeMs: number };
  /** Live: the read of another Service (`:svc NAME`, enter on the Services list); without it
   * another Service is diagnosed from the facts in hand (a snapshot). */
  loadFor?: (target: DiagnosedService) => TuiInput['load'];
  /** Live: the cluster's Services, for the `:svc` list (else the facts' own). */
  listServices?: () => Promise<Service[]>;
}
