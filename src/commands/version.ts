// `kdebug version`: kdebug's version; with -o json also Node's and, when a kubeconfig reaches
// one, the API server's.
import { jsonText } from '../core/sanitize.js';
import { schemaId } from '../output/schema-id.js';
import {
  COMMIT,
  EXIT,
  format,
  textWidth,
  VERSION,
  write,
  type GlobalOptions,
} from './common/io.js';
import { wrap } from '../output/wrap.js';
import { withExamples, type Define } from './common/flags.js';

export const VERSION_SCHEMA_VERSION = 1;

/** A kube-apiserver's gitVersion: "v1.30.2", "v1.29.4+k3s1", "v1.31.0-eks-a737599". */
const RELEASE = /^v\d+\.\d+\.\d+[\w.+-]*$/;

/** The document `version -o json` prints (schema/version.vN.json). */
export interface VersionDoc {
  $schema: string;
  schemaVersion: number;
  kdebug: string;
  commit: string;
  node: string;
  server: string | null;
  /** Why the API server's version is missing (no cluster is not an error for `version`). */
  serverError?: string;
}

export async function versionCommand(g: GlobalOptions): Promise<number> {
  if (format(g, 'version') !== 'json') {
    const said = `kdebug ${VERSION} (commit ${COMMIT}, Node.js ${process.version})`;
    write(`${wrap(said, textWidth().width, '', '  ').join('\n')}\n`);
    return EXIT.ok;
  }
  const doc: VersionDoc = {
    $schema: schemaId('version', VERSION_SCHEMA_VERSION),
    schemaVersion: VERSION_SCHEMA_VERSION,
    kdebug: VERSION,
    commit: COMMIT,
    node: process.version,
    server: null,
  };
  try {
    const { KubeApi } = await import('../cluster/kube-api.js');
    const { notKubernetes } = await import('../cluster/kube/errors.js');
    const api = await KubeApi.connect({
      kubeconfig: g.kubeconfig,
      context: g.context,
      timeoutMs: 5000,
    });
    try {
      const body = await api.request('GET', '/version');
      const version = (body as { gitVersion?: unknown } | null)?.gitVersion;
      // kube-apiserver answers its build info; other JSON is another server at that address
      if (typeof version !== 'string' || !RELEASE.test(version))
        throw notKubernetes(
          api.apiServer,
          `GET /version answered JSON without a Kubernetes release (gitVersion ${typeof version === 'string' ? 'not of the form v1.30.2' : 'missing'})`,
        );
      doc.server = version;
    } finally {
      api.close();
    }
  } catch (e) {
    doc.serverError = (e as Error).message;
  }
  write(jsonText(doc));
  return EXIT.ok;
}

/** `kdebug version`: its help and action. */
export const define: Define = (parent, run, g) => {
  withExamples(
    parent
      .command('version')
      .description('the version of kdebug (-o json: also of Node.js and the API server)'),
    ['kdebug version -o json'],
  ).action(() => run(versionCommand(g())));
};
