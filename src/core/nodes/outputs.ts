// Reads the stored stdout of a node probe back into an outcome. The probes
// (cluster/nodes/commands.ts) print the tool's own output, then `kdebug-probe KIND tool=T exit=N`; output
// pasted by hand without that line is read from the tool's words alone.

export type ProbeKind = 'tcp-connect' | 'udp-probe' | 'icmp-echo' | 'dns-lookup';

export interface ProbeResult {
  kind: ProbeKind;
  /** pass: the probe got through; fail: it did not; unknown: it could not run or said nothing. */
  status: 'pass' | 'fail' | 'unknown';
  /** One line a person can read: "connection refused", "reply in 0.26 ms", "NXDOMAIN" ... */
  detail: string;
  tool?: string;
  exitCode?: number;
  /** dns-lookup: the answer data (addresses, targets), in order. */
  answers?: string[];
  /** dns-lookup: the response code, e.g. NOERROR, NXDOMAIN, SERVFAIL. */
  rcode?: string;
  /** How a failed probe failed, where its tool said: refused (a reset or port-unreachable came
   * back: something is there and says no) or silent (nothing came back in time). */
  failure?: 'refused' | 'silent';
}

const TRAILER = /^kdebug-probe (\S+) tool=(\S*) exit=(\d+)\s*$/;

/** Splits the probe's closing line from the tool output above it. */
function split(stdout: string): { body: string[]; tool?: string; exit?: number } {
  const lines = stdout.split('\n').map((l) => l.replace(/\r$/, ''));
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  const m = TRAILER.exec(lines[lines.length - 1] ?? '');
  if (!m) return { body: lines };
  lines.pop();
  return { body: lines, tool: m[2] || undefined, exit: Number(m[3]) };
}

const lastWords = (body: string[]) =>
  body
    .filter((l) => l.trim() !== '')
    .pop()
    ?.trim() ?? '';

export function parseProbe(kind: ProbeKind, stdout: string): ProbeResult {
  const { body, tool, exit } = split(stdout);
  const base = {
    kind,
    ...(tool ? { tool } : {}),
    ...(exit !== undefined ? { exitCode: exit } : {}),
  };
  if (tool === 'none' || exit === 127)
    return {
      ...base,
      status: 'unknown',
      detail: lastWords(body) || 'the probe tool is missing on the node',
    };
  if (exit === 124)
    return {
      ...base,
      status: 'fail',
      detail: 'no answer before the time limit (timed out)',
      failure: 'silent',
    };
  if (exit === undefined && body.every((l) => l.trim() === ''))
    return { ...base, status: 'unknown', detail: 'no output' };
  switch (kind) {
    case 'tcp-connect':
      return { ...base, ...tcp(body, exit) };
    case 'udp-probe':
      return { ...base, ...udp(body, exit) };
    case 'icmp-echo':
      return { ...base, ...icmp(body, exit) };
    case 'dns-lookup':
      return { ...base, ...dns(body, exit, tool) };
  }
}

type ProbeOutcome = Pick<ProbeResult, 'status' | 'detail' | 'answers' | 'rcode' | 'failure'>;

// Words used by OpenBSD nc, ncat, busybox nc and bash's /dev/tcp.
function connectFailure(text: string): Pick<ProbeResult, 'detail' | 'failure'> | undefined {
  if (/refused/i.test(text)) return { detail: 'connection refused', failure: 'refused' };
  if (/no route to host|host is unreachable|host unreachable/i.test(text))
    return { detail: 'no route to host' };
  if (/network is unreachable/i.test(text)) return { detail: 'network is unreachable' };
  if (/timed out|timeout|operation now in progress/i.test(text))
    return {
      detail: 'no answer (timed out): the packets are dropped somewhere',
      failure: 'silent',
    };
  return undefined;
}

/** A failed probe: what its tool said, else its last words, else its exit code. */
const failed = (text: string, body: string[], exit: number | undefined): ProbeOutcome => ({
  status: 'fail',
  ...(connectFailure(text) ?? { detail: lastWords(body) || `failed (exit ${exit})` }),
});

function tcp(body: string[], exit: number | undefined): ProbeOutcome {
  const text = body.join('\n');
  if (exit === 0 || (exit === undefined && /succeeded|connected to|\bopen\b/i.test(text)))
    return { status: 'pass', detail: 'connected' };
  return failed(text, body, exit);
}

function udp(body: string[], exit: number | undefined): ProbeOutcome {
  const text = body.join('\n');
  const failure = connectFailure(text);
  // nc -u -z fails only when an ICMP port-unreachable comes back, and says nothing about it
  if (failure?.failure === 'refused' || (exit === 1 && text.trim() === ''))
    return {
      status: 'fail',
      detail: 'port unreachable: nothing listens there',
      failure: 'refused',
    };
  if (exit === 0 || (exit === undefined && /succeeded|\bopen\b/i.test(text)))
    return {
      status: 'pass',
      detail: 'no port-unreachable came back: open, or silently filtered (UDP cannot tell)',
    };
  return failed(text, body, exit);
}

function icmp(body: string[], exit: number | undefined): ProbeOutcome {
  const text = body.join('\n');
  const rtt = /time[=<]([\d.]+) ?ms/.exec(text);
  const received = /(\d+) (?:packets )?received/.exec(text);
  if (exit === 0 || (exit === undefined && received && Number(received[1]) > 0))
    return { status: 'pass', detail: rtt ? `reply in ${rtt[1]} ms` : 'reply' };
  const from = /From (\S+) .*?(Destination \w+ Unreachable|Time to live exceeded)/i.exec(text);
  if (from) return { status: 'fail', detail: `${from[2]!.toLowerCase()} (from ${from[1]})` };
  if (received) return { status: 'fail', detail: 'no reply (100% packet loss)', failure: 'silent' };
  return failed(text, body, exit);
}

function dns(body: string[], exit: number | undefined, tool: string | undefined): ProbeOutcome {
  // Without the closing line, nslookup gives itself away by its "Server:" header
  const isNslookup = tool
    ? tool === 'nslookup'
    : /^(Server|Name|Address)\s*:|^\*\* /m.test(body.join('\n'));
  return isNslookup ? nslookup(body) : dig(body, exit);
}

// dig +noall +comments +answer (or +short: bare answer lines).
function dig(body: string[], exit: number | undefined): ProbeOutcome {
  const text = body.join('\n');
  if (/communications error.*refused/i.test(text))
    return {
      status: 'fail',
      detail: 'the DNS server refused the connection (nothing listens on port 53)',
      failure: 'refused',
    };
  if (/timed out|no servers could be reached/i.test(text) || exit === 9)
    return {
      status: 'fail',
      detail: 'no reply from the DNS server (timed out)',
      failure: 'silent',
    };
  const rcode = /status: ([A-Z]+)/.exec(text)?.[1];
  const answers = body
    .filter((l) => l.trim() !== '' && !l.startsWith(';'))
    .map((l) => {
      const f = l.trim().split(/\s+/);
      // "name. 30 IN A 10.96.0.10" -> the data after the type; a +short line is all data
      const at = f.findIndex((w, i) => i > 0 && /^(IN|CH|HS)$/.test(w));
      return (at > 0 ? f.slice(at + 2) : f).join(' ');
    })
    .filter((a) => a !== '');
  return dnsOutcome(
    rcode ?? (answers.length > 0 ? 'NOERROR' : undefined),
    answers,
    lastWords(body),
  );
}

function nslookup(body: string[]): ProbeOutcome {
  const text = body.join('\n');
  if (/timed out|no servers could be reached/i.test(text))
    return {
      status: 'fail',
      detail: 'no reply from the DNS server (timed out)',
      failure: 'silent',
    };
  if (/refused/i.test(text) && !/REFUSED/.test(text))
    return {
      status: 'fail',
      detail: 'the DNS server refused the connection (nothing listens on port 53)',
      failure: 'refused',
    };
  const rcode = /can't find [^:]*: ?(NXDOMAIN|SERVFAIL|REFUSED|No answer)/i.exec(text)?.[1];
  const answers: string[] = [];
  let pastServer = false;
  for (const line of body) {
    const cname = /canonical name = (\S+)/.exec(line);
    const srv = /service = (.+)$/.exec(line);
    const addr = /^Address(?:es)?:\s*(\S+)/.exec(line.trim());
    if (cname) answers.push(cname[1]!);
    else if (srv) answers.push(srv[1]!.trim());
    else if (/^Name:/.test(line.trim())) pastServer = true;
    else if (addr && pastServer) answers.push(addr[1]!);
  }
  const code =
    rcode === undefined ? undefined : /no answer/i.test(rcode) ? 'NOERROR' : rcode.toUpperCase();
  return dnsOutcome(code ?? (answers.length > 0 ? 'NOERROR' : undefined), answers, lastWords(body));
}

function dnsOutcome(rcode: string | undefined, answers: string[], last: string): ProbeOutcome {
  const code = rcode ? { rcode } : {};
  if (rcode === 'NOERROR' && answers.length > 0)
    return { status: 'pass', detail: answers.join(', '), answers, ...code };
  if (rcode === 'NXDOMAIN')
    return { status: 'fail', detail: 'NXDOMAIN: no such name', answers, ...code };
  if (rcode === 'NOERROR')
    return {
      status: 'fail',
      detail: 'the name exists but has no record of this type',
      answers,
      ...code,
    };
  if (rcode)
    return { status: 'fail', detail: `the DNS server answered ${rcode}`, answers, ...code };
  return { status: 'unknown', detail: last || 'no answer', answers };
}

export type ProxyMode = 'iptables' | 'ipvs' | 'nftables' | 'kernelspace' | 'userspace';
const MODES: readonly string[] = ['iptables', 'ipvs', 'nftables', 'kernelspace', 'userspace'];

/** The mode kube-proxy reports on `/proxyMode`, or undefined when the output is not one. */
export function parseProxyMode(stdout: string): ProxyMode | undefined {
  const word = stdout.trim();
  return MODES.includes(word) ? (word as ProxyMode) : undefined;
}

export interface InterfaceAddresses {
  name: string;
  state: string;
  /** CIDRs, e.g. "192.0.2.11/24", "fe80::1/64". */
  addresses: string[];
}

/** `ip -br addr`: "eth0@if12  UP  192.0.2.11/24 fe80::1/64" per line. */
export function parseIpBrief(stdout: string): InterfaceAddresses[] {
  return stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 2 && f[0] !== '')
    .map(([name, state, ...addresses]) => ({
      name: name!.replace(/@.*$/, ''),
      state: state!,
      addresses,
    }));
}
