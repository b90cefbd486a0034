// Fuzzy search over everything a person types when hunting a Service in the rules: Service names,
// chain names, comments, IPs and ports. fuse.js ranks; it only ever sees a few hundred candidates,
// found first by substring and trigram lookups over a deduplicated corpus (a 10,000-Service dump
// holds ~400,000 searchable strings, which fuse.js alone takes about a second to scan).
import Fuse from 'fuse.js';
import type { Ruleset } from './iptables.js';
import type { ServiceTrees } from './service-tree.js';

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

export class SearchIndex {
  readonly docs: SearchDoc[] = [];
  private readonly words: number[] = []; // docs that typos should still find: names, comments
  private corpus = ''; // every doc's lower-cased text, SEP-separated
  private starts: Int32Array = new Int32Array(0);
  private trigrams = new Map<number, number[]>();
  private counts: Uint16Array = new Uint16Array(0);

  /** Adds a document; `words` marks names and comments, the texts worth a fuzzy match. */
  add(doc: SearchDoc, words = false): void {
    if (words) this.words.push(this.docs.length);
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
      this.starts[i] = at;
      at += t.length + 1;
    }
    this.starts[this.docs.length] = at;
    this.corpus = parts.join(SEP) + SEP;
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
    const seen = new Set<string>();
    return (
      fuse
        .search(q, { limit: limit * 3 })
        .map((r) => ({
          ...r.item,
          score: r.score ?? 1,
          ranges: (r.matches?.[0]?.indices ?? []).map(([s, e]) => [s, e] as [number, number]),
        }))
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
          const key = `${h.kind}\u0000${h.text}\u0000${h.chain ?? ''}`;
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        })
        .slice(0, limit)
    );
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

function gram(s: string, k: number): number {
  return (
    ((s.charCodeAt(k) & 0x3ff) << 20) |
    ((s.charCodeAt(k + 1) & 0x3ff) << 10) |
    (s.charCodeAt(k + 2) & 0x3ff)
  );
}

const stripHost = (cidr: string) => cidr.replace(/\/(32|128)$/, '');

/** Indexes a node's rules and its Service trees. */
export function buildSearchIndex(rs: Ruleset, trees: ServiceTrees): SearchIndex {
  const index = new SearchIndex();
  const owner = new Map<string, string>(); // chain -> tree id
  const byLine = new Map<string, string>(); // "table:line" -> tree id, for rules in shared chains
  for (const t of trees.services) {
    for (const r of [...t.entries, ...t.masquerade]) byLine.set(`nat:${r.line}`, t.id);
    for (const v of t.verdicts) byLine.set(`${v.table}:${v.line}`, t.id);
    index.add({ kind: 'service', text: t.id, service: t.id, chain: t.chains.svc }, true);
    if (t.clusterIP)
      index.add({
        kind: 'service',
        text: `${t.clusterIP}:${t.port}`,
        service: t.id,
        chain: t.chains.svc,
      });
    for (const np of t.nodePorts)
      index.add({
        kind: 'service',
        text: String(np),
        service: t.id,
        chain: t.chains.ext ?? t.chains.svc,
      });
    for (const ip of [...t.externalIPs, ...t.loadBalancerIPs])
      index.add({ kind: 'service', text: ip, service: t.id, chain: t.chains.ext ?? t.chains.fw });
    for (const c of Object.values(t.chains)) if (c) owner.set(c, t.id);
    for (const ep of [...t.endpoints, ...(t.localEndpoints ?? [])]) {
      owner.set(ep.chain, t.id);
      const text = ep.address ?? ep.inferredIP;
      if (text) index.add({ kind: 'endpoint', text, service: t.id, chain: ep.chain, table: 'nat' });
    }
  }
  for (const table of rs.tables) {
    for (const chain of table.chains) {
      const name = chain.name;
      index.add({
        kind: 'chain',
        text: name,
        service: owner.get(name),
        table: table.name,
        chain: name,
        line: chain.line,
      });
      const service = owner.get(name);
      for (let k = 0; k < chain.ruleCount; k++) {
        const id = chain.ruleId(k);
        const line = table.line(id);
        // a rule in a shared chain (KUBE-SERVICES ...) belongs to the Service its tree names
        const at = {
          kind: 'rule' as const,
          service: service ?? byLine.get(`${table.name}:${line}`),
          table: table.name,
          chain: name,
          line,
        };
        const comment = table.comment(id);
        if (comment) index.add({ ...at, text: comment }, true);
        const dst = table.destination(id);
        if (dst) index.add({ ...at, text: stripHost(dst) });
        const src = table.source(id);
        if (src) index.add({ ...at, text: stripHost(src) });
        const dport = table.dport(id);
        if (dport) index.add({ ...at, text: dport });
        const to = table.to(id);
        if (to) index.add({ ...at, text: to });
      }
    }
  }
  return index.seal();
}
