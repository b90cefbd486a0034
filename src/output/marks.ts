// The marks of step and finding statuses, one table for text and the TUI: readable without colour.
import type { Shown } from '../core/model.js';

export const MARK: Record<Shown, string> = {
  pass: '✓',
  fail: '✗',
  warn: '!',
  skip: '-',
  pending: '…',
  unobserved: '?',
  // passed where it looked, not observed somewhere it speaks for: never a bare ✓
  partial: '◐',
};

/** What each mark means, in words: the TUI's step header and its help. */
export const MARK_MEANING: Record<Shown, string> = {
  pass: 'passed',
  warn: 'warning',
  fail: 'failed',
  skip: 'skipped',
  unobserved: 'not observed',
  partial: 'passed where observed, not observed everywhere',
  pending: 'waiting for facts',
};
