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
