// The resource types the fake API server knows, with the field selectors each kind registers
// (kubernetes/kubernetes pkg/apis/*/v1/conversion.go), and request paths parsed the apiserver way.

export interface ResourceType {
  resource: string;
  group: string;
  version: string;
  kind: string;
  namespaced: boolean;
  /** Field labels this kind accepts in fieldSelector; anything else is a 400. */
  fields: string[];
}

const META = ['metadata.name', 'metadata.namespace'];

export const RESOURCE_TYPES: ResourceType[] = [
  {
    resource: 'services',
    group: '',
    version: 'v1',
    kind: 'Service',
    namespaced: true,
    fields: [...META, 'spec.clusterIP', 'spec.type'],
  },
  {
    resource: 'endpoints',
    group: '',
    version: 'v1',
    kind: 'Endpoints',
    namespaced: true,
    fields: META,
  },
  {
    resource: 'pods',
    group: '',
    version: 'v1',
    kind: 'Pod',
    namespaced: true,
    fields: [
      ...META,
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.podIPs',
      'status.nominatedNodeName',
      'spec.host',
    ],
  },
  {
    resource: 'nodes',
    group: '',
    version: 'v1',
    kind: 'Node',
    namespaced: false,
    fields: ['metadata.name', 'spec.unschedulable'],
  },
  {
    resource: 'namespaces',
    group: '',
    version: 'v1',
    kind: 'Namespace',
    namespaced: false,
    fields: ['metadata.name', 'status.phase'],
  },
  {
    resource: 'configmaps',
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    namespaced: true,
    fields: META,
  },
  {
    resource: 'secrets',
    group: '',
    version: 'v1',
    kind: 'Secret',
    namespaced: true,
    fields: [...META, 'type'],
  },
  {
    resource: 'endpointslices',
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    namespaced: true,
    fields: META,
  },
  {
    resource: 'daemonsets',
    group: 'apps',
    version: 'v1',
    kind: 'DaemonSet',
    namespaced: true,
    fields: META,
  },
  {
    resource: 'deployments',
    group: 'apps',
    version: 'v1',
    kind: 'Deployment',
    namespaced: true,
    fields: META,
  },
  {
    resource: 'networkpolicies',
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'NetworkPolicy',
    namespaced: true,
    fields: META,
  },
  {
    resource: 'servicecidrs',
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'ServiceCIDR',
    namespaced: false,
    fields: ['metadata.name'],
  },
  {
    resource: 'selfsubjectaccessreviews',
    group: 'authorization.k8s.io',
    version: 'v1',
    kind: 'SelfSubjectAccessReview',
    namespaced: false,
    fields: [],
  },
];

export const apiVersionOf = (t: ResourceType) => (t.group ? `${t.group}/${t.version}` : t.version);

/** "services" or "endpointslices.discovery.k8s.io": how Status messages name a resource. */
export const qualified = (t: ResourceType) => (t.group ? `${t.resource}.${t.group}` : t.resource);

export function typeOfKind(kind: string | undefined): ResourceType | undefined {
  return RESOURCE_TYPES.find((t) => t.kind === kind);
}

export interface ApiPath {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Parses /api/v1/... and /apis/GROUP/VERSION/...; undefined for paths the server does not serve. */
export function parseApiPath(pathname: string): ApiPath | undefined {
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2)
    [group, version, rest] = ['', parts[1]!, parts.slice(2)];
  else if (parts[0] === 'apis' && parts.length >= 3)
    [group, version, rest] = [parts[1]!, parts[2]!, parts.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  // /namespaces/NS/RESOURCE/... is namespaced; /namespaces and /namespaces/NAME are the Namespace kind
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource, name, subresource, ...extra] = rest;
  const type = RESOURCE_TYPES.find(
    (t) => t.resource === resource && t.group === group && t.version === version,
  );
  if (!type || extra.length > 0 || (namespace !== undefined && !type.namespaced)) return undefined;
  return { type, namespace, name, subresource };
}
