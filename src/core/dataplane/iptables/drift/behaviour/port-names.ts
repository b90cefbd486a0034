// A Service port's own names (its name, addresses, ports, chains and endpoints) numbered <0>, <1>
// ... by value, in a fixed order of its fields, and what its rules are written from with them
// (its shape): two ports of one shape write the same numbered rules and differ in their names
// only (behaviour.ts keys walks by it, writing each shape's rules once).
import type { EndpointShape, PortShape } from '../../rule-text.js';
import type { ExpectedEndpoint, ExpectedServicePort } from '../../../kube-proxy/service-port.js';
import { hostCidr } from '../../../../ipv6.js';

export interface NumberedPort {
  /** Each own word and its number: a value, and an address with its /32 or /128. */
  names: Map<string, string>;
  /** The ASCII codes an own word starts with (1), made as they are numbered: what renamer
   * looks words up by, not gathered again from `names` for each text. */
  first: Uint8Array;
  /** The shape, as text: equal for two ports exactly where their shapes are equal. */
  key: string;
  /** All servicePortRules reads of the port, its names numbered: made when asked (once per
   * shape), the key telling shapes apart. */
  shape: () => PortShape;
}

/** Every field given, the optional ones too: a shape leaves nothing out by mistake. */
type Whole<T> = { [K in keyof Required<T>]: T[K] };

export function numberedPort(sp: ExpectedServicePort): NumberedPort {
  const names = new Map<string, string>();
  const first = new Uint8Array(128);
  const name = (value: string) => {
    let n = names.get(value);
    if (n === undefined) {
      names.set(value, (n = `<${names.size}>`));
      const c = value.charCodeAt(0);
      if (c < 128) first[c] = 1;
    }
    return n;
  };
  // an address and its host CIDR share a number, as rules write it with its /32 or /128 (the
  // CIDR starts as the address does)
  const address = (ip: string) => {
    const n = name(ip);
    const cidr = hostCidr(ip);
    if (cidr !== ip) names.set(cidr, n + cidr.slice(ip.length));
    return n;
  };
  // the port's ports are numbered as strings: servicePortRules writes them as they are
  const port = (p: number | undefined) =>
    (p === undefined ? undefined : name(String(p))) as number | undefined;
  const chain = (c: string | undefined) => (c === undefined ? undefined : name(c));
  const fields: Omit<
    Whole<PortShape>,
    'clusterEndpoints' | 'localEndpoints' | 'reachableEndpoints'
  > = {
    name: name(sp.name),
    protocol: sp.protocol,
    clusterIP: address(sp.clusterIP),
    externalIPs: sp.externalIPs.map(address),
    loadBalancerIPs: sp.loadBalancerIPs.map(address),
    port: port(sp.port)!,
    nodePort: port(sp.nodePort),
    chains: {
      svc: chain(sp.chains.svc),
      svl: chain(sp.chains.svl),
      ext: chain(sp.chains.ext),
      fw: chain(sp.chains.fw),
    },
    internalChain: name(sp.internalChain),
    externalPolicyChain: name(sp.externalPolicyChain),
    healthCheckNodePort: sp.healthCheckNodePort,
    sourceRanges: sp.sourceRanges,
    externalPolicyLocal: sp.externalPolicyLocal,
    affinitySeconds: sp.affinitySeconds,
    hasEndpoints: sp.hasEndpoints,
    hasInternalEndpoints: sp.hasInternalEndpoints,
    hasExternalEndpoints: sp.hasExternalEndpoints,
    clusterIPMasquerade: sp.clusterIPMasquerade,
    internalVerdict: sp.internalVerdict,
    externalVerdict: sp.externalVerdict,
  };
  for (const e of sp.allEndpoints) {
    address(e.ip);
    port(e.port);
    name(e.address);
  }
  // only endpoints with a KUBE-SEP chain on this node are written (their chain is hashed when
  // first asked for); each as its three numbers, "<i><a><c>", a list as their run: no shape
  // objects are made for the ports of a shape already met
  const listed = (eps: readonly ExpectedEndpoint[]) => {
    let out = '';
    for (const e of eps) out += name(e.ip) + name(e.address) + name(e.chain);
    return out;
  };
  // the reachable list is most often the cluster one itself
  const reachable = listed(sp.reachableEndpoints);
  const cluster =
    sp.clusterEndpoints === sp.reachableEndpoints ? reachable : listed(sp.clusterEndpoints);
  const lists = [reachable, cluster, listed(sp.localEndpoints)];
  const endpoint = (e: ExpectedEndpoint): EndpointShape => ({
    ip: names.get(e.ip)!,
    address: names.get(e.address)!,
    chain: names.get(e.chain)!,
  });
  return {
    names,
    first,
    key: `${JSON.stringify(fields)} ${lists.join(' ')}`,
    shape: () => ({
      ...fields,
      reachableEndpoints: sp.reachableEndpoints.map(endpoint),
      clusterEndpoints: sp.clusterEndpoints.map(endpoint),
      localEndpoints: sp.localEndpoints.map(endpoint),
    }),
  };
}

/**
 * Renames a text's own words (`names`) to their numbers. A word is a quoted comment whole,
 * spaces and all, else up to the next space. A comment is numbered <"0>, <"1> ... in order of
 * first use, or, `inComments`, keeps its words, its own ones renamed: a rule of the port's own
 * renamed so reads as numberedPort writes it. Scanned by hand, a word looked up only where it
 * starts as an own word can.
 */
export function renamer(
  { names, first }: Pick<NumberedPort, 'names' | 'first'>,
  inComments = false,
): (text: string) => string {
  const comments = new Map<string, string>();
  const rename = (text: string): string => {
    let out = '';
    let done = 0; // text[0, done) is in out
    const n = text.length;
    let i = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32) {
        i++;
        continue;
      }
      let end = i + 1;
      if (c === 34) {
        while (end < n && text.charCodeAt(end) !== 34) end++;
        if (end < n) end++;
        else for (end = i + 1; end < n && text.charCodeAt(end) !== 32;) end++;
      } else while (end < n && text.charCodeAt(end) !== 32) end++;
      if (c >= 128 || c === 34 /* a comment */ || first[c]) {
        const word = text.slice(i, end);
        let name: string | undefined;
        if (c !== 34) name = names.get(word);
        else if (inComments) name = `"${rename(word.slice(1, -1))}"`;
        else if ((name = comments.get(word)) === undefined)
          comments.set(word, (name = `<"${comments.size}>`));
        if (name !== undefined) {
          out += text.slice(done, i) + name;
          done = end;
        }
      }
      i = end;
    }
    return done === 0 ? text : out + text.slice(done);
  };
  return rename;
}
