// The service.cilium.io/node-selector annotation (1.18 on) as the agent reads it: a label
// selector in the text form k8s.io/apimachinery's labels.Parse takes (reflectors/conversions.go,
// CheckServiceNodeExposure): equality (=, ==, !=), set (in, notin), existence (key, !key) and
// gt/lt terms, comma-separated.

type Labels = Readonly<Record<string, string>>;
type Term = (labels: Labels) => boolean;

const NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DNS = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;
const INTEGER = /^[-+]?\d+$/;

/** A label key: a name, after a DNS subdomain prefix and '/' where it has one. */
function validKey(key: string): boolean {
  const [prefix, name, more] = key.split('/');
  if (more !== undefined) return false;
  if (name === undefined) return NAME.test(prefix!);
  return prefix!.length <= 253 && DNS.test(prefix!) && NAME.test(name);
}

const validValue = (v: string) => v === '' || NAME.test(v);
const has = (l: Labels, k: string) => Object.hasOwn(l, k);

/** The selector's test, or undefined where labels.Parse would fail on the text. */
export function parseNodeSelector(text: string): Term | undefined {
  const tokens = text.match(/==|!=|[=!(),<>]|[^\s=!(),<>]+/g) ?? [];
  let i = 0;
  const ended = () => i === tokens.length || tokens[i] === ',';

  /** The values of an in/notin term, after its '(': identifiers (or nothing) between commas. */
  const values = (): Set<string> | undefined => {
    const out = new Set<string>();
    let value = '';
    for (let t = tokens[i++]; t !== ')'; t = tokens[i++]) {
      if (t === undefined) return undefined;
      if (t === ',') {
        out.add(value);
        value = '';
      } else if (value === '' && validValue(t)) value = t;
      else return undefined;
    }
    out.add(value);
    return tokens[i - 2] === '(' ? undefined : out;
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
      if (!set || !ended()) return undefined;
      return op === 'in'
        ? (l) => has(l, key) && set.has(l[key]!)
        : (l) => !has(l, key) || !set.has(l[key]!);
    }
    if (op === '>' || op === '<') {
      const bound = tokens[i++];
      if (bound === undefined || !INTEGER.test(bound) || !ended()) return undefined;
      const than = (n: number) => (op === '>' ? n > Number(bound) : n < Number(bound));
      return (l) => has(l, key) && INTEGER.test(l[key]!) && than(Number(l[key]));
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
