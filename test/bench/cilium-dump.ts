// A `cilium-dbg bpf lb list` of a big cluster, as Cilium 1.18 prints it
// (src/core/dataplane/cilium/expected/render.ts writes it the agent's way): `services` ClusterIP
// Services of `backends` backends each.
import type { ExpectedFrontend } from '../../src/core/dataplane/cilium/expected/expected.js';
import {
  CILIUM_MAP_DEFAULTS,
  expectedMaps,
} from '../../src/core/dataplane/cilium/maps/expected.js';
import { bpfLbList } from '../../src/core/dataplane/cilium/expected/render.js';

export function ciliumBpfList(o: { services: number; backends: number }): string {
  const frontends: ExpectedFrontend[] = [];
  for (let i = 0; i < o.services; i++) {
    const ip = `10.96.${(i >> 8) & 255}.${i & 255}`;
    frontends.push({
      ip,
      port: 80,
      protocol: 'tcp',
      type: 'ClusterIP',
      service: `ns-${i % 100}/svc-${i}`,
      portName: 'http',
      servicePort: 80,
      localOnly: false,
      backends: Array.from({ length: o.backends }, (_, k) => {
        const n = i * o.backends + k;
        return {
          ip: `10.${64 + ((n >> 16) & 63)}.${(n >> 8) & 255}.${n & 255}`,
          port: 8080,
          protocol: 'tcp' as const,
          state: 'active' as const,
          weight: 100,
        };
      }),
    });
  }
  const maps = expectedMaps(frontends, {
    services: [],
    nodePortAddresses: [],
    options: CILIUM_MAP_DEFAULTS,
  });
  return `${bpfLbList(maps).join('\n')}\n`;
}
