// What the reading of an `iptables -L` listing says of it, each fact at the first line it is about.

/** A fact of the listing as read, at the first line it is about (with every such line). */
export interface ListViewNote {
  line: number;
  message: string;
  lines?: number[];
}

/** "line 3" or "lines 3, 4": the lines a note is about. */
export const lineList = (at: number[]) => `line${at.length === 1 ? '' : 's'} ${at.join(', ')}`;
