// Search over everything a person types when hunting a Service in the rules: Service names,
// chain names, comments, IPs and ports, targets and marks. An address or a port matches exactly
// (10.244.1.8 is never 10.244.1.80); words match fuzzily. fuse.js ranks; it only ever sees a few
// hundred candidates, found first by substring and trigram lookups over a deduplicated corpus (a
// 10,000-Service dump holds ~400,000 searchable strings, which fuse.js alone takes a second to scan).
import Fuse from 'fuse.js';
import type { Ruleset } from '../iptables/read/parse.js';
import { contains } from '../../ipv4.js';

export type SearchKind = 'service' | 'chain' | 'endpoint' | 'rule';

export interface SearchDoc {
  kind: SearchKind;
  /** The searchable text: a Service name, chain name, comment, address or port. */
  text: string;
  /** The Service port it belongs to (tree id), when known. */
  service?: string;
  table?: string;
  chain?: string;
  line?: number;
}

export interface SearchHit extends SearchDoc {
  /** 0 is a perfect match, 1 none at all (fuse.js scores). */
  score: number;
  /** [start, end] inclusive character ranges of `text` that matched, for highlighting. */
  ranges: [number, number][];
}

const KIND_ORDER: Record<SearchKind, number> = { service: 0, chain: 1, endpoint: 2, rule: 3 };
const MAX_CANDIDATES = 400;
/** With this many exact substring hits, typo-tolerant candidates add nothing worth their cost. */
const ENOUGH_EXACT = 25;
/** Trigrams shared by more documents than this narrow nothing; rarer ones are used first. */
const COMMON_GRAM = 5000;
const SEP = '\n';
/** Targets a person searches for; looked up in the rules when asked, not indexed. */
const TARGETS = new Set([
  'ACCEPT',
  'DROP',
  'REJECT',
  'RETURN',
  'DNAT',
  'SNAT',
  'MASQUERADE',
  'REDIRECT',
  'MARK',
  'CONNMARK',
  'LOG',
  'NOTRACK',
  'KUBE-MARK-MASQ',
  'KUBE-MARK-DROP',
]);
const IPV4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?:\/(\d{1,2}))?(?::(\d{1,5}))?$/;

export class SearchIndex {
  readonly docs: SearchDoc[] = [];
  private readonly words: number[] = []; // docs that typos should still find: names, comments
  private corpus = ''; // every doc's lower-cased text, SEP-separated
  private starts: Int32Array = new Int32Array(0);
  private trigrams = new Map<number, number[]>();
  private counts: Uint16Array = new Uint16Array(0);
  private cidrs = new Map<string, number[]>(); // docs that are CIDRs, by text
  private vocabulary: Map<string, string[]> | undefined; // words of names, by first letter
  /** The rules, for what is looked up in them when asked (targets, marks). */
  rules?: {
    rs: Ruleset;
    serviceOf: (table: string, chain: string, line: number) => string | undefined;
  };

  /** Adds a document; `words` marks names and comments, the texts worth a fuzzy match. */
  add(doc: SearchDoc, words = false): void {
    if (words) this.words.push(this.docs.length);
    else if (doc.text.includes('/') && IPV4.test(doc.text)) {
      const docs = this.cidrs.get(doc.text);
      if (docs) docs.push(this.docs.length);
      else this.cidrs.set(doc.text, [this.docs.length]);
    }
    this.docs.push(doc);
  }

  /** Builds the lookup structures; call once after the last add(). */
  seal(): this {
    const parts: string[] = new Array(this.docs.length);
    this.starts = new Int32Array(this.docs.length + 1);
    let at = 0;
    for (let i = 0; i < this.docs.length; i++) {
      const t = this.docs[i]!.text.toLowerCase();
      parts[i] = t;
      this.starts[i] = at + 1; // after the corpus's leading SEP
      at += t.length + 1;
    }
    this.starts[this.docs.length] = at + 1;
    this.corpus = SEP + parts.join(SEP) + SEP;
    for (const i of this.words) {
      const t = parts[i]!;
      for (let k = 0; k + 3 <= t.length; k++) {
        const g = gram(t, k);
        const list = this.trigrams.get(g);
        if (list === undefined) this.trigrams.set(g, [i]);
        else if (list[list.length - 1] !== i) list.push(i);
      }
    }
    this.counts = new Uint16Array(this.docs.length);
    return this;
  }

  search(query: string, limit = 50): SearchHit[] {
    const q = query.trim().toLowerCase();
    if (q.length === 0) return [];
    if (IPV4.test(q) || /^\d{1,5}$/.test(q)) return this.addresses(q, limit);
    const hits = [...this.targets(query.trim(), limit), ...this.fuzzy(q, limit)];
    // a word found nowhere as typed may be a typo of one that is there
    if (/^[a-z][a-z0-9-]{2,}$/.test(q) && !this.corpus.includes(q))
      for (const [word, distance] of this.corrections(q))
        for (const h of this.fuzzy(word, limit))
          hits.push({ ...h, score: Math.min(1, h.score + 0.15 * distance) });
    return rank(hits, limit);
  }

  /** Docs that are this address or port exactly: an IP (with any port, or a CIDR holding it), a
   * CIDR (the IPs inside it), IP:port, or a port (alone or after an IP). */
  private addresses(q: string, limit: number): SearchHit[] {
    const hits: SearchHit[] = [];
    const add = (i: number, score: number, from = 0, to = this.docs[i]!.text.length - 1) =>
      hits.push({ ...this.docs[i]!, score, ranges: [[from, to]] });
    const m = IPV4.exec(q);
    if (!m) {
      // a port: the whole text, or after a colon
      for (const needle of [`${SEP}${q}${SEP}`, `:${q}${SEP}`])
        for (const i of this.containing(needle, hits.length, limit * 4)) {
          const t = this.docs[i]!.text;
          add(i, 0, t.length - q.length);
        }
      return rank(hits, limit);
    }
    const [, ip, len, port] = m;
    if (len === undefined) {
      // the IP itself, bounded: not a prefix of a longer address, with or without :port or /len
      for (const i of this.containing(`${SEP}${ip}`, 0, limit * 4)) {
        const t = this.docs[i]!.text;
        const next = t[ip!.length];
        if (next !== undefined && next !== ':' && next !== '/') continue;
        if (port !== undefined && t !== q) continue;
        add(i, t === q ? 0 : 0.05, 0, ip!.length - 1);
      }
      if (port === undefined)
        for (const [cidr, docs] of this.cidrs)
          if (cidr !== ip && contains(cidr, ip!)) for (const i of docs) add(i, 0.2);
    } else {
      for (const [cidr, docs] of this.cidrs) if (cidr === q) for (const i of docs) add(i, 0);
      // the addresses inside: docs that start with the CIDR's whole octets
      const fixed = ip!.split('.').slice(0, Math.floor(Number(len) / 8));
      const needle = fixed.length > 0 ? `${SEP}${fixed.join('.')}.` : SEP;
      for (const d of this.containing(needle, hits.length, limit * 4)) {
        const a = IPV4.exec(this.docs[d]!.text);
        if (a && a[2] === undefined && contains(q, a[1]!)) add(d, 0.1, 0, a[1]!.length - 1);
      }
    }
    return rank(hits, limit);
  }

  /** Docs whose SEP-bounded corpus text contains the needle. */
  private containing(needle: string, have: number, max: number): number[] {
    const out: number[] = [];
    for (
      let at = this.corpus.indexOf(needle);
      at >= 0 && have + out.length < max;
      at = this.corpus.indexOf(needle, at + 1)
    ) {
      const doc = this.docAt(needle.startsWith(SEP) ? at + 1 : at);
      if (out[out.length - 1] !== doc) out.push(doc);
    }
    return out;
  }

  /** Rules whose target is the query (MASQUERADE, DNAT, KUBE-MARK-MASQ ...) or that set or
   * match the mark it names (0x4000): looked up in the rules, which the index does not hold. */
  private targets(query: string, limit: number): SearchHit[] {
    const r = this.rules;
    if (!r) return [];
    const target = query.toUpperCase();
    const mark = /^0x[0-9a-f]+(?:\/0x[0-9a-f]+)?$/i.test(query) ? query.toLowerCase() : undefined;
    if (!TARGETS.has(target) && !mark) return [];
    const hits: SearchHit[] = [];
    for (const table of r.rs.tables)
      for (let c = 0; c < table.chainCount && hits.length < limit; c++) {
        // a Service's own chains jump to KUBE-SEP / KUBE-MARK-MASQ or DNAT, and set no mark
        const own = table.kindOf(c) !== undefined;
        if (own && (mark || !['DNAT', 'KUBE-MARK-MASQ', 'KUBE-MARK-DROP'].includes(target)))
          continue;
        const chain = table.nameOf(c);
        for (let k = 0; k < table.ruleCountOf(c) && hits.length < limit; k++) {
          const id = table.ruleIdOf(c, k);
          let text: string | undefined;
          if (mark) {
            const line = table.text(id).toLowerCase();
            const at = line.indexOf(mark);
            if (at < 0 || /[0-9a-fx]/.test(line[at + mark.length] ?? ' ')) continue;
            text = /^\S+/.exec(line.slice(at))![0];
          } else if (table.target(id) === target) text = target;
          if (text === undefined) continue;
          const line = table.line(id);
          hits.push({
            kind: 'rule',
            text,
            service: r.serviceOf(table.name, chain, line),
            table: table.name,
            chain,
            line,
            score: 0,
            ranges: [[0, text.length - 1]],
          });
        }
      }
    return hits;
  }

  /** Words of the names and comments one or two typos away from the query ("ngnix" is nginx). */
  private corrections(q: string): [string, number][] {
    const vocabulary = (this.vocabulary ??= this.words.reduce((byLetter, i) => {
      for (const w of this.docs[i]!.text.toLowerCase().split(/[^a-z0-9]+/)) {
        if (w.length < 3) continue;
        const list = byLetter.get(w[0]!) ?? [];
        if (list.length === 0) byLetter.set(w[0]!, list);
        if (!list.includes(w)) list.push(w);
      }
      return byLetter;
    }, new Map<string, string[]>()));
    const most = q.length <= 4 ? 1 : 2;
    const out: [string, number][] = [];
    for (const w of vocabulary.get(q[0]!) ?? []) {
      if (Math.abs(w.length - q.length) > most || w === q) continue;
      const d = typos(q, w, most);
      if (d <= most) out.push([w, d]);
    }
    return out.sort((a, b) => a[1] - b[1]).slice(0, 3);
  }

  /** fuse.js over the candidates of one word or phrase. */
  private fuzzy(q: string, limit: number): SearchHit[] {
    const candidates = this.candidates(q);
    if (candidates.length === 0) return [];
    const fuse = new Fuse(
      candidates.map((i) => this.docs[i]!),
      {
        keys: ['text'],
        includeScore: true,
        includeMatches: true,
        ignoreLocation: true,
        threshold: 0.4,
        minMatchCharLength: Math.min(2, q.length),
      },
    );
    return fuse.search(q, { limit: limit * 3 }).map((r) => ({
      ...r.item,
      score: r.score ?? 1,
      ranges: (r.matches?.[0]?.indices ?? []).map(([s, e]) => [s, e] as [number, number]),
    }));
  }

  /** Docs containing the query; when few, also names and comments sharing most of its trigrams. */
  private candidates(q: string): number[] {
    const picked = new Set<number>();
    // substring hits: one native scan of the corpus
    for (
      let at = this.corpus.indexOf(q);
      at >= 0 && picked.size < MAX_CANDIDATES;
      at = this.corpus.indexOf(q, at + 1)
    ) {
      const doc = this.docAt(at);
      picked.add(doc);
      at = this.starts[doc + 1]! - 1; // next doc
    }
    if (picked.size >= ENOUGH_EXACT || q.length < 3) return [...picked];
    // fuzzy hits: names and comments that share the most trigrams with the query, rare ones first
    const grams = [...new Set(Array.from({ length: q.length - 2 }, (_, k) => gram(q, k)))]
      .map((g) => this.trigrams.get(g) ?? [])
      .sort((a, b) => a.length - b.length);
    const usable = grams.filter((list, i) => i === 0 || list.length <= COMMON_GRAM);
    const touched: number[] = [];
    for (const list of usable) {
      for (const d of list) if (this.counts[d]!++ === 0) touched.push(d);
    }
    const need = Math.max(1, Math.ceil(grams.length / 3));
    const best = touched.filter((d) => this.counts[d]! >= need);
    best.sort(
      (a, b) =>
        this.counts[b]! - this.counts[a]! || this.docs[a]!.text.length - this.docs[b]!.text.length,
    );
    for (const d of touched) this.counts[d] = 0;
    for (const d of best) {
      if (picked.size >= MAX_CANDIDATES) break;
      picked.add(d);
    }
    return [...picked];
  }

  private docAt(offset: number): number {
    let lo = 0;
    let hi = this.docs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** Hits best first, each text once per chain. */
function rank(hits: SearchHit[], limit: number): SearchHit[] {
  const seen = new Set<string>();
  return (
    hits
      // near-equal scores rank a Service before a chain, an endpoint, then a single rule
      .sort(
        (a, b) =>
          Math.round(a.score * 5) - Math.round(b.score * 5) ||
          KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
          a.score - b.score ||
          a.text.length - b.text.length,
      )
      // the same text in the same chain twice (two rules) is one answer
      .filter((h) => {
        const key = `${h.kind}\u0000${h.text}\u0000${h.chain ?? ''}\u0000${h.table ?? ''}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      })
      .slice(0, limit)
  );
}

/** Edits (insert, delete, substitute, swap two neighbours) from a to b, or most + 1 past most. */
function typos(a: string, b: string, most: number): number {
  const rows = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > most) return most + 1;
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

function gram(s: string, k: number): number {
  return (
    ((s.charCodeAt(k) & 0x3ff) << 20) |
    ((s.charCodeAt(k + 1) & 0x3ff) << 10) |
    (s.charCodeAt(k + 2) & 0x3ff)
  );
}
