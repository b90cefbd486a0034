// A Service's annotations and labels, as the agent reads its metadata.
import type { Service } from '../../../kube/objects.js';

export const annotations = (svc: Service) =>
  (svc.raw.metadata as { annotations?: Record<string, string> } | undefined)?.annotations ?? {};
export const labels = (svc: Service) => svc.raw.metadata?.labels ?? {};
