// Kubernetes API failures in a person's words: which server, which credentials, and for RBAC
// the exact verb, resource and namespace that was refused. One line each, never a stack trace.

export type KubeErrorReason =
  | 'no-kubeconfig'
  | 'kubeconfig'
  | 'credentials'
  | 'unreachable'
  | 'timeout'
  | 'unauthorized'
  | 'forbidden'
  | 'not-found'
  | 'bad-request'
  | 'conflict'
  | 'expired'
  | 'server'
  | 'closed'
  /** The server at the kubeconfig's URL is not the Kubernetes API: a web page, a login redirect,
   * a 404 where the API's discovery should be, a certificate for other hosts. */
  | 'not-kubernetes';

/** A metav1.Status body, as the API server sends it with every error. */
export interface KubeStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: { reason?: string; message?: string }[];
  };
}

export class KubeApiError extends Error {
  constructor(
    readonly reason: KubeErrorReason,
    message: string,
    /** The HTTP status and Status body, when the server answered. */
    readonly code?: number,
    readonly status?: KubeStatus,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** A request RBAC refused: the CLI says where the Roles kdebug needs are. */
export class RbacDeniedError extends KubeApiError {}

/** The API server a request went to, and as whom, for messages. */
export interface ApiServer {
  server: string;
  context: string;
  user: string;
}

/** One request, as RBAC sees it. */
export interface RequestInfo {
  method: string;
  path: string;
  watch?: boolean;
}

export interface RbacAttributes {
  verb: string;
  /** resource[/subresource][.group], e.g. "endpointslices.discovery.k8s.io" or "pods/exec". */
  resource: string;
  namespace?: string;
  name?: string;
}

/** The verb, resource and namespace of a request to /api/v1/... or /apis/GROUP/VERSION/... */
export function rbacAttributes(r: RequestInfo): RbacAttributes | undefined {
  const parts = r.path.split('?')[0]!.split('/').filter(Boolean);
  let group = '';
  let rest: string[];
  if (parts[0] === 'api') rest = parts.slice(2);
  else if (parts[0] === 'apis') [group, rest] = [parts[1] ?? '', parts.slice(3)];
  else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1], rest.slice(2)];
  const [resource, name, sub] = rest;
  if (!resource) return undefined;
  const method = r.method.toUpperCase();
  const verb =
    method === 'GET'
      ? name
        ? 'get'
        : r.watch
          ? 'watch'
          : 'list'
      : method === 'POST'
        ? 'create'
        : method === 'DELETE'
          ? name
            ? 'delete'
            : 'deletecollection'
          : method === 'PATCH'
            ? 'patch'
            : 'update';
  return {
    verb,
    resource: `${resource}${sub ? `/${sub}` : ''}${group ? `.${group}` : ''}`,
    namespace,
    name,
  };
}

const scope = (ns: string | undefined) => (ns ? `in namespace ${ns}` : 'at the cluster scope');

/** "cannot list endpointslices.discovery.k8s.io in namespace default" */
export function refusal(a: RbacAttributes): string {
  return `cannot ${a.verb} ${a.resource} ${scope(a.namespace)}`;
}

const RBAC_MESSAGE =
  /User "([^"]*)" cannot (\S+) resource "([^"]+)" in API group "([^"]*)" (?:in the namespace "([^"]+)"|at the cluster scope)/;

/** The metav1.Status in an error body: what every answer of a Kubernetes API server's carries. */
export function parseStatus(text: string): KubeStatus | undefined {
  try {
    const s = JSON.parse(text) as KubeStatus;
    return s && typeof s === 'object' && s.kind === 'Status' ? s : undefined;
  } catch {
    return undefined;
  }
}

/** A non-2xx answer from the API server, explained. */
export function httpError(
  where: ApiServer,
  r: RequestInfo,
  code: number,
  body: string,
): KubeApiError {
  const status = parseStatus(body);
  const said = status?.message ?? webPage(body) ?? (body.trim().split('\n')[0] || `HTTP ${code}`);
  const attrs = rbacAttributes(r);
  switch (code) {
    case 401:
      return new KubeApiError(
        'unauthorized',
        `the API server at ${where.server} rejected the credentials of user "${where.user}" (context "${where.context}"): 401 Unauthorized; the token or client certificate is missing, wrong or expired`,
        code,
        status,
      );
    case 403: {
      const m = RBAC_MESSAGE.exec(said);
      if (m) {
        const [, user, verb, resource, group, namespace] = m as unknown as [
          string,
          string,
          string,
          string,
          string,
          string | undefined,
        ];
        const what = refusal({
          verb,
          resource: group ? `${resource}.${group}` : resource,
          namespace,
        });
        return new RbacDeniedError(
          'forbidden',
          `access denied by RBAC: user "${user}" ${what} (context "${where.context}")`,
          code,
          status,
        );
      }
      if (/violates PodSecurity/.test(said)) {
        const why = said.replace(/^.*? is forbidden: /, '');
        return new KubeApiError(
          'forbidden',
          `Pod Security admission refused the Pod ${scope(attrs?.namespace)}: ${why}`,
          code,
          status,
        );
      }
      const what = attrs ? refusal(attrs) : `cannot ${r.method} ${r.path}`;
      return new KubeApiError(
        'forbidden',
        `access denied: ${what} (context "${where.context}"): ${said}`,
        code,
        status,
      );
    }
    case 404: {
      const where404 = attrs?.namespace ? ` in namespace ${attrs.namespace}` : '';
      const text =
        status?.reason === 'NotFound' && attrs?.name
          ? `${said}${where404}`
          : `${said} (${r.method} ${r.path})`;
      return new KubeApiError('not-found', text, code, status);
    }
    case 400:
    case 422:
      return new KubeApiError(
        'bad-request',
        `the API server refused ${r.method} ${r.path}: ${said}`,
        code,
        status,
      );
    case 409:
      return new KubeApiError('conflict', said, code, status);
    case 410:
      return new KubeApiError('expired', `${said} (${r.method} ${r.path})`, code, status);
    default:
      return new KubeApiError(
        'server',
        `the API server at ${where.server} failed ${r.method} ${r.path}: ${code} ${said}`,
        code,
        status,
      );
  }
}

/** How an HTTP answer came: enough of it to tell the Kubernetes API from something else. */
export interface HttpAnswer {
  code: number;
  body: string;
  contentType?: string;
  /** A redirect's Location, resolved against the request's URL. */
  location?: string;
}

const CHECK_SERVER = 'check the server: URL in the kubeconfig (its host, port and path)';

/** "a web page ("Sign in")" for an HTML body (by its type, or a body that starts with "<"). */
export function webPage(body: string, contentType = ''): string | undefined {
  // anchored: a list of hundreds of MiB is looked at only up to its first non-blank character
  if (!/html/i.test(contentType) && !/^\s*</.test(body)) return undefined;
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1]?.replace(/\s+/g, ' ').trim();
  return title ? `a web page ("${title.slice(0, 80)}")` : 'a web page';
}

/** A non-Status body in a few words: "an empty body", or its first line. */
export function bodyPhrase(body: string): string {
  const first = body.trim().split('\n')[0]?.trim() ?? '';
  return first ? `"${first.slice(0, 80)}"` : 'an empty body';
}

/** The verdict on a server whose answers are not the Kubernetes API's (404 where discovery is). */
export function notKubernetes(where: ApiServer, evidence: string): KubeApiError {
  return new KubeApiError(
    'not-kubernetes',
    `the server at ${where.server} (context "${where.context}") is not a Kubernetes API server, or not at that path: ${evidence}; ${CHECK_SERVER}`,
  );
}

/**
 * An answer no Kubernetes API server gives to any request: a redirect (a login page), or a web
 * page. 401 and 403 keep their own words (credentials, RBAC), and a 5xx page is a proxy whose API
 * server is down: those are undefined here.
 */
export function foreignAnswer(
  where: ApiServer,
  r: RequestInfo,
  a: HttpAnswer,
): KubeApiError | undefined {
  const server = `the server at ${where.server} (context "${where.context}")`;
  if (a.code >= 300 && a.code < 400) {
    const to = a.location ? `, to ${a.location}` : ' without a Location';
    return new KubeApiError(
      'not-kubernetes',
      `${server} sends requests to a login page or another site, not to a Kubernetes API server: ${r.method} ${r.path} answered ${a.code}${to} (an authenticating proxy in front of the API? the kubeconfig needs the API server's own address)`,
      a.code,
    );
  }
  if (a.code === 401 || a.code === 403 || a.code >= 500) return undefined;
  const page = webPage(a.body, a.contentType);
  if (!page) return undefined;
  return new KubeApiError(
    'not-kubernetes',
    `${server} is a web site, not a Kubernetes API server: ${r.method} ${r.path} answered ${a.code} with ${page}; ${CHECK_SERVER}`,
    a.code,
  );
}

/** What Node's ERR_TLS_CERT_ALTNAME_INVALID carries: the name checked, the peer's certificate. */
interface AltnameError {
  host?: string;
  cert?: { subjectaltname?: string; subject?: { CN?: string } };
}

/** ERR_TLS_CERT_ALTNAME_INVALID: the certificate is another host's; say whose. */
function certificateForOthers(where: ApiServer, err: AltnameError): KubeApiError {
  const cn = err.cert?.subject?.CN;
  const names = err.cert?.subjectaltname || (cn ? `CN=${cn}` : 'other hosts');
  const urlHost = new URL(where.server).hostname.replace(/^\[|\]$/g, '');
  const host = err.host ?? urlHost;
  // the name checked is not the URL's when the cluster entry sets tls-server-name
  const fix =
    host === urlHost
      ? 'the cluster entry needs tls-server-name: one of those names'
      : `its tls-server-name should be one of those names`;
  return new KubeApiError(
    'not-kubernetes',
    `the server at ${where.server} (context "${where.context}") presented a certificate for ${names}, not for ${host} (ERR_TLS_CERT_ALTNAME_INVALID): it is not the API server the kubeconfig means, or ${fix}`,
  );
}

const CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection closed by the server',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found (DNS)',
  EAI_AGAIN: 'host name lookup failed (DNS)',
  SELF_SIGNED_CERT_IN_CHAIN:
    "its certificate is not signed by the kubeconfig's certificate-authority",
  DEPTH_ZERO_SELF_SIGNED_CERT:
    "its certificate is self-signed and not the kubeconfig's certificate-authority",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "its certificate is not signed by the kubeconfig's certificate-authority",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "its certificate is not signed by the kubeconfig's certificate-authority",
  CERT_SIGNATURE_FAILURE:
    "its certificate does not verify against the kubeconfig's certificate-authority",
  CERT_HAS_EXPIRED: 'its certificate has expired',
  EPROTO: 'the TLS handshake failed (is it an HTTPS endpoint?)',
  ERR_SSL_WRONG_VERSION_NUMBER: 'the TLS handshake failed (is it an HTTPS endpoint?)',
};

/** A connection that never produced an HTTP answer: refused, DNS, TLS, reset. */
export function transportError(where: ApiServer, e: unknown): KubeApiError {
  const err = e as NodeJS.ErrnoException & AltnameError;
  const code = err?.code ?? '';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return certificateForOthers(where, err);
  const known =
    CAUSES[code] ??
    (/ssl|tls/i.test(err?.message ?? '') ? `the TLS handshake failed: ${err.message}` : undefined);
  const cause = known ? `${known} (${code || 'TLS'})` : (err?.message ?? String(e));
  return new KubeApiError(
    'unreachable',
    `cannot reach the API server at ${where.server} (context "${where.context}"): ${cause}`,
  );
}

export function timeoutError(where: ApiServer, r: RequestInfo, ms: number): KubeApiError {
  return new KubeApiError(
    'timeout',
    `the API server at ${where.server} did not answer ${r.method} ${r.path} within ${ms / 1000}s (context "${where.context}")`,
  );
}

/** A failure to get credentials before any request was sent (exec plugin, token file). */
export function credentialsError(
  where: ApiServer,
  plugin: string | undefined,
  e: unknown,
): KubeApiError {
  const err = e as NodeJS.ErrnoException;
  const said = (err?.message ?? String(e)).trim().split('\n')[0] || 'no output';
  const text = plugin
    ? err?.code === 'ENOENT' && err.syscall?.startsWith('spawn')
      ? `the credential plugin "${plugin}" of user "${where.user}" was not found (is it on PATH?)`
      : `the credential plugin "${plugin}" of user "${where.user}" failed: ${said}`
    : `reading the credentials of user "${where.user}" failed: ${said}`;
  return new KubeApiError('credentials', `${text} (context "${where.context}")`);
}

// the API server's words when it cannot proxy an exec to the node's kubelet (a Status message)
const KUBELET_PROXY =
  /^(?:Internal error occurred: )?(?:error dialing backend|error sending request): /;

/**
 * An exec the API server could not hand to the node's kubelet, said as that: the kubelet's
 * address and why, without the exec URL it repeats (the command, word by word).
 */
export function kubeletUnreachable(message: string): string | undefined {
  const m = KUBELET_PROXY.exec(message);
  if (!m) return undefined;
  const rest = message.slice(m[0].length).replace(/^(?:Post|Get) "?\w+:\/\/[^\s"]*"?: /, '');
  const dial = /^dial tcp (\S+): (?:connect: |getsockopt: )?(.+)$/.exec(rest);
  return dial
    ? `the API server could not connect to the node's kubelet at ${dial[1]}: ${dial[2]}`
    : `the API server could not reach the node's kubelet: ${rest}`;
}
