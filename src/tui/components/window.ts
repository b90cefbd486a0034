// Which slice of a long list a pane shows: the cursor stays in view, and the view moves only
// when the cursor would leave it (like k9s and less), so the screen does not jump around.
import { useRef } from 'react';

/** The first row to show, given the first row shown before. */
export function windowStart(cursor: number, length: number, height: number, previous = 0): number {
  const h = Math.max(1, height);
  const last = Math.max(0, length - h);
  let start = Math.min(previous, last);
  if (cursor < start) start = cursor;
  else if (cursor >= start + h) start = cursor - h + 1;
  return Math.max(0, Math.min(start, last));
}

/** windowStart with the previous start remembered by the component. */
export function useWindow(cursor: number, length: number, height: number): number {
  const previous = useRef(0);
  previous.current = windowStart(cursor, length, height, previous.current);
  return previous.current;
}
