// A step's or finding's status as a mark: a spinner while pending, then ✓ ! ✗ -, and ? for what
// was not observed.
import type { Shown } from '../../core/model.js';
import { MARK } from '../../output/marks.js';
import { STATUS_TONE } from '../../output/tones.js';
import { SPINNER } from '../theme.js';
import { S } from './text.js';

export function Mark({ status, tick }: { status: Shown; tick: number }) {
  const glyph = status === 'pending' ? SPINNER[tick % SPINNER.length]! : MARK[status];
  return <S tone={STATUS_TONE[status]}>{glyph}</S>;
}
