// The Nodes of a large cluster as `kubectl get nodes` rows (the API server's Table, ~100 bytes a
// Node against kilobytes whole): enough to choose the nodes to read (name, Ready, OS) and to know
// every node's first addresses; the chosen nodes are then read whole by name (finish.ts).
import type { KubeObject } from '../../core/model.js';
import type { TableRow } from '../cluster.js';
import { PODS_BY_NODE } from './addons.js';
import { WHOLE_LIST_PAGE, type Reader } from './api-reader.js';

/** What a Table cell holds where the Node has none (the API server's printer, printers.go). */
const NONE = '<none>';

const cell = (row: TableRow, column: string): string | undefined => {
  const v = row[column];
  return typeof v === 'string' && v !== '' && v !== NONE ? v : undefined;
};

/** A Node's Ready condition as its Status cell prints it: "Ready", "NotReady" (False or
 * Unknown), "Unknown" (no Ready condition), each maybe followed by ",SchedulingDisabled". */
function readyOf(status: string | undefined): string | undefined {
  const first = status?.split(',')[0];
  return first === 'Ready' ? 'True' : first === 'NotReady' ? 'False' : undefined;
}

/**
 * A Node as far as its row tells it: its name, its Ready condition's status, its first InternalIP
 * and ExternalIP, its kubelet's version; its OS from the list of Windows nodes (the row has no
 * labels). Its Pod CIDRs, taints and the Ready condition's reason are read with the whole Node.
 */
export function nodeOfRow(
  row: TableRow,
  windows: ReadonlySet<string | undefined>,
): KubeObject | undefined {
  const name = cell(row, 'Name');
  if (name === undefined) return undefined;
  const ready = readyOf(cell(row, 'Status'));
  const addresses = [
    ['InternalIP', cell(row, 'Internal-IP')],
    ['ExternalIP', cell(row, 'External-IP')],
  ].flatMap(([type, address]) => (address ? [{ type, address }] : []));
  const kubeletVersion = cell(row, 'Version');
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/os': windows.has(name) ? 'windows' : 'linux' },
    },
    status: {
      ...(addresses.length > 0 ? { addresses } : {}),
      ...(ready ? { conditions: [{ type: 'Ready', status: ready }] } : {}),
      ...(kubeletVersion ? { nodeInfo: { kubeletVersion } } : {}),
    },
  };
}

/** The label every kubelet sets on its Node: its OS. */
export const WINDOWS_NODES = 'kubernetes.io/os=windows';

/** Every Node as a row, where the API server serves Tables (kept partial: see nodeOfRow); else,
 * or where a row read failed, every Node whole, as a snapshot lists them. */
export async function listNodeRows(r: Reader): Promise<void> {
  const [all, windows] = await Promise.all([
    r.rows('Nodes (rows)', { resource: 'nodes', pageSize: WHOLE_LIST_PAGE }),
    r.rows('Windows Nodes (rows)', { resource: 'nodes', labelSelector: WINDOWS_NODES }),
  ]);
  if (!all || !windows)
    return void (await r.list('Nodes', { resource: 'nodes', pageSize: WHOLE_LIST_PAGE }));
  const windowsNames = new Set(windows.map((row) => cell(row, 'Name')));
  const nodes: KubeObject[] = [];
  for (const row of all) {
    const node = nodeOfRow(row, windowsNames);
    if (node) nodes.push(node);
  }
  r.keepPartial(nodes);
}

/** The Nodes among `names` read as rows only, read whole: by name, or past PODS_BY_NODE of them
 * every Node in one list (one list costs less than so many reads by name). */
export async function readNodesWhole(r: Reader, names: string[]): Promise<boolean> {
  const partial = [...new Set(names)].filter((n) => r.isPartial('Node', '', n));
  if (partial.length === 0) return false;
  if (partial.length > PODS_BY_NODE)
    await r.list('Nodes', { resource: 'nodes', pageSize: WHOLE_LIST_PAGE });
  else await Promise.all(partial.map((name) => r.get(`Node ${name}`, { resource: 'nodes', name })));
  return true;
}
