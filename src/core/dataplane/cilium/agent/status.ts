// The settings the agent itself says it runs with, read from its `cilium-dbg status --verbose`.
import type { CiliumSettings } from './agent.js';
import type { StatusSetting } from './provenance.js';

type Said = Partial<Pick<CiliumSettings, StatusSetting>> & {
  version?: string;
  /** The Pod ranges its IPAM allocates from on this node ("IPAM: IPv4: 6/254 allocated from
   * 10.244.1.0/24, IPv6: ..."). */
  podCIDRs?: string[];
  /** The replacement's mode as printed ("True", "Partial", "Probe", "Strict", "False",
   * "Disabled"), and the Service kinds its details list enabled or not (verbose only). */
  replacementMode?: string;
  services?: Partial<Record<ServiceKind, boolean>>;
  /** Its own health lines not Ok, as printed ("Cilium: Failure 1.18.6 (...)", "Kubernetes:
   * Disabled"): an agent failing or not following the API keeps what it last programmed. */
  unhealthy?: string[];
  /** The field each setting said was read from ("Socket LB", "Backend Selection"): an older
   * status prints fewer, and a setting it did not print is no setting it said. */
  fields: StatusFields;
};

export type StatusFields = Partial<Record<StatusSetting, string>>;

/** The Service kinds the details' "Services:" list names (pkg/client FormatStatusResponse). */
export const SERVICE_KINDS = ['ClusterIP', 'NodePort', 'LoadBalancer', 'externalIPs', 'HostPort'];
export type ServiceKind = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'externalIPs' | 'HostPort';

/** `cilium-dbg status --verbose`: "KubeProxyReplacement:  True  [eth0 ...]", then its details
 * ("Socket LB: Enabled", "Socket LB Coverage: Hostns-only", "Mode: SNAT", "Backend Selection:
 * Random", "Session Affinity: Enabled", "- NodePort: Enabled (Range: 30000-32767)");
 * "Cilium: Ok 1.16.5 (v1.16.5-...)". */
export function fromStatus(text: string): Said {
  // split once and read each line on its own: expressions over the whole text, where `^\s*` or a
  // `\s+` runs across lines, take quadratic time on a hostile paste (thousands of blank lines, a
  // line of spaces)
  const raw = statusLines(text);
  // each line's indentation taken off once, for the fields (any indentation)
  const lines = raw.map((l) => l.trimStart());
  const field = (name: string) => fieldOf(lines, name);
  const on = (v: string | undefined) =>
    v === undefined ? undefined : /^(true|enabled|strict)\b/i.test(v);
  const fields: StatusFields = {};
  const out: Said = { fields };
  // the details' own Status where the summary line is not in the text (a quote of the details)
  const summary = field('KubeProxyReplacement');
  const kpr = summary ?? detailsStatus(raw);
  if (kpr !== undefined) {
    out.kubeProxyReplacement = on(kpr)!;
    out.replacementMode = kpr.split(/\s/)[0]!;
    fields.kubeProxyReplacement =
      summary !== undefined ? 'KubeProxyReplacement' : 'KubeProxyReplacement Details: Status';
  }
  const sock = field('Socket LB');
  if (sock !== undefined) [out.socketLB, fields.socketLB] = [on(sock)!, 'Socket LB'];
  const coverage = field('Socket LB Coverage');
  if (coverage !== undefined)
    [out.hostnsOnly, fields.hostnsOnly] = [/hostns/i.test(coverage), 'Socket LB Coverage'];
  const mode = field('Mode');
  if (mode) [out.forwarding, fields.forwarding] = [mode.split(/\s/)[0]!.toLowerCase(), 'Mode'];
  const selection = field('Backend Selection');
  if (selection)
    [out.algorithm, fields.algorithm] = [
      selection.split(/\s/)[0]!.toLowerCase(),
      'Backend Selection',
    ];
  const affinity = field('Session Affinity');
  if (affinity !== undefined)
    [out.sessionAffinity, fields.sessionAffinity] = [on(affinity)!, 'Session Affinity'];
  const services = servicesListed(raw);
  if (services) out.services = services;
  const range = nodePortRange(lines);
  if (range) [out.nodePortRange, fields.nodePortRange] = [range, 'Services: NodePort'];
  const version = releaseOf(raw);
  if (version) out.version = `v${version.replace(/^v/, '')}`;
  const ipam = field('IPAM');
  const pools = [...(ipam ?? '').matchAll(/allocated from ([0-9a-fA-F.:]+\/\d+)/g)].map(
    (m) => m[1]!,
  );
  if (pools.length > 0) out.podCIDRs = pools;
  const unhealthy = raw.filter((l) => /^(Cilium|Kubernetes):\s+(?!Ok\b)\S/.test(l));
  if (unhealthy.length > 0) out.unhealthy = unhealthy.map((l) => l.trim().replace(/\s+/g, ' '));
  return out;
}

/** A text's lines, at any line terminator a multiline `$` stops at. */
export const statusLines = (text: string) => text.split(/\r\n|[\n\r\u2028\u2029]/);

/** The value of the first line "NAME: value" (leading whitespace, any case), trimmed; a line of
 * the name with nothing after it says nothing. */
export function fieldOf(lines: readonly string[], name: string): string | undefined {
  const key = `${name.toLowerCase()}:`;
  for (const line of lines) {
    const l = line.trimStart();
    if (l.length <= key.length || l.slice(0, key.length).toLowerCase() !== key) continue;
    const rest = l.slice(key.length);
    // the name followed by whitespace, then the value ("Socket LB Coverage:" is no "Socket LB:")
    if (!/^\s/.test(rest)) continue;
    const value = rest.trim();
    if (value) return value;
  }
  return undefined;
}

/** "KubeProxyReplacement Details:" and on the next line, indented, "Status: VALUE". */
function detailsStatus(lines: readonly string[]): string | undefined {
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!/^[ \t]*KubeProxyReplacement Details:[ \t]*$/.test(lines[i]!)) continue;
    const m = /^[ \t]+Status:[ \t]+(\S+)/.exec(lines[i + 1]!);
    if (m) return m[1];
  }
  return undefined;
}

/** The details' "Services:" list: "  - NodePort:  Enabled (Range: ...)", "  - HostPort:  Disabled",
 * each kind enabled or not; undefined where the status has no such list (not --verbose). */
function servicesListed(
  lines: readonly string[],
): Partial<Record<ServiceKind, boolean>> | undefined {
  const at = lines.findIndex((l) => /^[ \t]*Services:[ \t]*$/.test(l));
  if (at < 0) return undefined;
  const out: Partial<Record<ServiceKind, boolean>> = {};
  for (const line of lines.slice(at + 1, at + 1 + SERVICE_KINDS.length)) {
    const m = /^[ \t]*-[ \t]*(\w+):[ \t]+(\w+)/.exec(line);
    if (!m || !SERVICE_KINDS.includes(m[1]!)) break;
    out[m[1] as ServiceKind] = m[2] === 'Enabled';
  }
  return out;
}

/** "- NodePort: Enabled (Range: 30000-32767)" (the dash optional). */
function nodePortRange(lines: readonly string[]): [number, number] | undefined {
  for (const line of lines) {
    let l = line.trimStart();
    if (l.startsWith('-')) l = l.slice(1).trimStart();
    if (!l.startsWith('NodePort:')) continue;
    const m = /^\s+Enabled \(Range: (\d+)-(\d+)\)/.exec(l.slice('NodePort:'.length));
    if (m) return [Number(m[1]), Number(m[2])];
  }
  return undefined;
}

/** "Cilium: Ok 1.16.5 (v1.16.5-...)": the release after the state. */
function releaseOf(lines: readonly string[]): string | undefined {
  for (const line of lines) {
    if (!line.startsWith('Cilium:')) continue;
    const words = line.slice('Cilium:'.length);
    // whitespace, the state, whitespace, the release
    const m = /^\s+\S+\s+(\d+\.\d+\.\d+\S*)/.exec(words);
    if (m) return m[1];
  }
  return undefined;
}
