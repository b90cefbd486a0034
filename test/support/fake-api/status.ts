// metav1.Status bodies with the apiserver's wording and field order (apimachinery
// pkg/api/errors/errors.go, apiserver endpoints/handlers/responsewriters/errors.go).
import type { ResourceType } from './resources.js';
import { qualified } from './resources.js';

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason: string; message: string }[];
  };
  code: number;
}

function failure(
  code: number,
  reason: string,
  message: string,
  details?: StatusBody['details'],
): StatusBody {
  // Go's field order: kind, apiVersion, metadata, status, message, reason, details, code
  return details
    ? {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message,
        reason,
        details,
        code,
      }
    : { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function details(t: ResourceType, name?: string): NonNullable<StatusBody['details']> {
  return { ...(name ? { name } : {}), ...(t.group ? { group: t.group } : {}), kind: t.resource };
}

export const unauthorized = () => failure(401, 'Unauthorized', 'Unauthorized');

export function notFound(t: ResourceType, name: string): StatusBody {
  return failure(404, 'NotFound', `${qualified(t)} "${name}" not found`, details(t, name));
}

export const noSuchResource = () =>
  failure(404, 'NotFound', 'the server could not find the requested resource', {});

export interface Refusal {
  user: string;
  verb: string;
  type: ResourceType;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** The RBAC refusal: `pods "x" is forbidden: User "u" cannot create resource "pods/exec" in API group "" in the namespace "ns"`. */
export function forbidden(r: Refusal): StatusBody {
  const resource = r.subresource ? `${r.type.resource}/${r.subresource}` : r.type.resource;
  const scope = r.namespace ? `in the namespace "${r.namespace}"` : 'at the cluster scope';
  const why = `User "${r.user}" cannot ${r.verb} resource "${resource}" in API group "${r.type.group}" ${scope}`;
  const subject = r.name ? `${qualified(r.type)} "${r.name}"` : qualified(r.type);
  return failure(403, 'Forbidden', `${subject} is forbidden: ${why}`, details(r.type, r.name));
}

/** A refusal by an admission plugin (Pod Security), worded by the caller. */
export function admissionForbidden(t: ResourceType, name: string, why: string): StatusBody {
  return failure(
    403,
    'Forbidden',
    `${qualified(t)} "${name}" is forbidden: ${why}`,
    details(t, name),
  );
}

export const badRequest = (message: string) => failure(400, 'BadRequest', message);

export const alreadyExists = (t: ResourceType, name: string) =>
  failure(409, 'AlreadyExists', `${qualified(t)} "${name}" already exists`, details(t, name));

export const expired = (message: string) => failure(410, 'Expired', message);

export const methodNotAllowed = () =>
  failure(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
  );

export const internalError = (message: string) => failure(500, 'InternalError', message);
