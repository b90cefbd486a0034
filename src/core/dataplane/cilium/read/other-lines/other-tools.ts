// Other tools' output pasted beside an agent's listing that holds no Service facts, named by what
// prints it: said not read at its lines, never skipped in silence.
import type { CiliumCut } from '../listing.js';

/** `bpftool cgroup tree` (bpftool's cgroup.c): "CgroupPath", its column header "ID AttachType
 * AttachFlags Name", then each cgroup's path and a row per program attached to it. */
export function bpftoolCgroupTree(lines: readonly string[]): CiliumCut | undefined {
  const header = lines.findIndex(
    (l, i) =>
      l.trim() === 'CgroupPath' &&
      /^\s*ID\s+AttachType\s+AttachFlags\s+Name\b/.test(lines[i + 1] ?? ''),
  );
  if (header < 0) return undefined;
  let end = header + 1;
  while (end + 1 < lines.length && /^\s*(?:\/\S*|\d+\s+\w+(?:\s+\S+)*)\s*$/.test(lines[end + 1]!))
    end++;
  const hooks = new Set(
    lines
      .slice(header + 2, end + 1)
      .map((l) => /^\s*\d+\s+(\w+)/.exec(l)?.[1])
      .filter((h) => h !== undefined),
  );
  const socket = [...hooks].some((h) => /^(?:connect|sendmsg|recvmsg|getpeername)[46]$/.test(h));
  return {
    line: header + 1,
    reason: `lines ${header + 1}-${end + 1} are \`bpftool cgroup tree\`, the BPF programs attached to cgroups${socket ? ` (${[...hooks].join(', ')}: socket-LB hooks, translating a Service address at connect, as Cilium's socket LB does)` : ''}: it lists no Service, frontend or backend, and is not read`,
  };
}
