// The service.cilium.io/node-selector annotation (1.18 on) as the agent reads it: a label
// selector in the text form k8s.io/apimachinery's labels.Parse takes (reflectors/conversions.go,
// CheckServiceNodeExposure): equality (=, ==, !=), set (in, notin), existence (key, !key) and
// gt/lt terms, comma-separated.

type Labels = Readonly<Record<string, string>>;
type Term = (labels: Labels) => boolean;

const NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DNS = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const INT64 = [-(2n ** 63n), 2n ** 63n - 1n] as const;

/** A label key: a name, after a DNS subdomain prefix and '/' where it has one. */
function validKey(key: string): boolean {
  const [prefix, name, more] = key.split('/');
  if (more !== undefined) return false;
  if (name === undefined) return NAME.test(prefix!);
  return prefix!.length <= 253 && DNS.test(prefix!) && NAME.test(name);
}

const validValue = (v: string) => v === '' || NAME.test(v);
const has = (l: Labels, k: string) => Object.hasOwn(l, k);
/** Go's strconv.ParseInt(s, 10, 64): a sign allowed, no more than 64 bits. */
function int64(s: string): bigint | undefined {
  if (!/^[-+]?\d+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= INT64[0] && n <= INT64[1] ? n : undefined;
}
/** Not one of the lexer's symbols: an identifier (in a value's place, "in" and "notin" too). */
const identifier = (t: string | undefined): t is string => t !== undefined && !/^[=!(),<>]/.test(t);

/** The selector's test, or undefined where labels.Parse would fail on the text; `strictCommas`:
 * the parser of apimachinery v0.33 (Cilium 1.18), which fails on ')' right after ",,". */
export function parseNodeSelector(text: string, strictCommas = false): Term | undefined {
  // the lexer's whitespace is these four; "!=" and "==" are its only two-symbol tokens
  const tokens = text.match(/==|!=|[=!(),<>]|[^ \t\r\n=!(),<>]+/g) ?? [];
  let i = 0;
  const ended = () => i === tokens.length || tokens[i] === ',';

  /** An in/notin term's values after its '(', as parseValues and parseIdentifiersList read
   * them: "()" is the set {""}, so is a value left empty by a comma. */
  const values = (): Set<string> | undefined => {
    const out = new Set<string>();
    if (tokens[i] === ')') out.add('');
    for (let t = tokens[i++]; t !== ')'; t = tokens[i++]) {
      if (identifier(t)) {
        out.add(t);
        if (tokens[i] !== ')' && tokens[i] !== ',') return undefined;
      } else if (t === ',') {
        const next = tokens[i];
        // "(," and ",)" and ",," each stand for an empty value
        if (out.size === 0 || next === ')' || next === ',') out.add('');
        if (next === ',') i++;
        // v0.33's parseIdentifiersList reads no ')' right after the ",," it took
        if (strictCommas && next === ',' && tokens[i] === ')') return undefined;
      } else return undefined;
    }
    return out;
  };

  const term = (): Term | undefined => {
    if (tokens[i] === '!') {
      const key = tokens[++i];
      i++;
      return key !== undefined && validKey(key) && ended() ? (l) => !has(l, key) : undefined;
    }
    const key = tokens[i++];
    if (key === undefined || !validKey(key)) return undefined;
    if (ended()) return (l) => has(l, key);
    const op = tokens[i++]!;
    if (op === '=' || op === '==' || op === '!=') {
      const value = ended() ? '' : tokens[i++]!;
      if (!validValue(value) || !ended()) return undefined;
      return op === '!=' ? (l) => l[key] !== value : (l) => has(l, key) && l[key] === value;
    }
    if (op === 'in' || op === 'notin') {
      if (tokens[i++] !== '(') return undefined;
      const set = values();
      if (!set || ![...set].every(validValue) || !ended()) return undefined;
      return op === 'in'
        ? (l) => has(l, key) && set.has(l[key]!)
        : (l) => !has(l, key) || !set.has(l[key]!);
    }
    if (op === '>' || op === '<') {
      // NewRequirement asks both an integer and a label value of it: digits only ("-1" fails)
      const operand = tokens[i++];
      const bound = operand !== undefined && validValue(operand) ? int64(operand) : undefined;
      if (bound === undefined || !ended()) return undefined;
      const than = (n: bigint) => (op === '>' ? n > bound : n < bound);
      return (l) => {
        const n = has(l, key) ? int64(l[key]!) : undefined;
        return n !== undefined && than(n);
      };
    }
    return undefined;
  };

  const terms: Term[] = [];
  while (i < tokens.length) {
    const t = term();
    if (!t) return undefined;
    terms.push(t);
    // a comma must lead to another term
    if (tokens[i] === ',' && ++i === tokens.length) return undefined;
  }
  return (l) => terms.every((t) => t(l));
}
