// nft's own error reports in a paste, for the message that names them to quote the first: nft's
// erec_print writes "FILE:LINE:COL: Error: WHAT" for input read from a file or stdin (`nft -f`,
// kube-proxy's sync), and "Error: WHAT" alone for a command typed, each followed by the input line
// it refused and a line of carets under the part refused.
import { excerpt } from '../../../../../sanitize.js';
import { NFT_ERROR } from './foreign-lines.js';

/** "Error: ..." as nft prints it for a command typed, framed as a log viewer may frame it. */
const TYPED_ERROR = /^\s*(?:[│|]\s*)?Error: \S/;
const CARETS = /^\s*(?:[│|]\s*)?~*\^[~^]*\s*$/;

export interface NftErrors {
  /** The 1-based line of the first report, and what nft said there (escaped, cut to one line). */
  line: number;
  said: string;
  /** How many reports the paste holds. */
  count: number;
  /** Whether the reports are of a command typed (no FILE:LINE:COL): no rule was being loaded. */
  typed: boolean;
}

/** nft's error reports in `text`: a located one, or an "Error: " line whose next-but-one line is
 * its carets (another tool's "Error:" has none); undefined where there is none. */
export function nftErrors(text: string): NftErrors | undefined {
  const lines = text.split('\n');
  const at: number[] = [];
  let typed = 0;
  lines.forEach((l, i) => {
    if (NFT_ERROR.test(l)) at.push(i);
    else if (TYPED_ERROR.test(l) && CARETS.test(lines[i + 2] ?? '')) {
      at.push(i);
      typed++;
    }
  });
  if (at.length === 0) return undefined;
  const first = lines[at[0]!]!.replace(/^\s*(?:[│|]\s*)?/, '').trimEnd();
  return {
    line: at[0]! + 1,
    said: excerpt(first, 160),
    count: at.length,
    typed: typed === at.length,
  };
}

/** The first report, said: its line and nft's words, with how many more there are. */
export const nftErrorSaid = (e: NftErrors): string =>
  `line ${e.line}: "${e.said}"${e.count > 1 ? ` (and ${e.count - 1} more of nft's errors)` : ''}`;
