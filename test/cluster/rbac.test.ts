// `kdebug rbac` against what kdebug really asks of an API server: the fake one allows the printed
// rules and nothing else, the built CLI runs svc, snapshot save (through the kube-proxy Pods and
// through debug Pods) and cleanup as that user, and then (1) nothing was refused, (2) every
// request fell under a printed rule, resource names included, and (3) every printed verb was
// used by some request: the Role is exactly what kdebug needs. The debug Pods' namespace is the
// Namespace the YAML prints. The comments say plainly how far each exec grant reaches. The real
// kube-apiserver applies the same YAML in test/lab-cluster/cluster.cluster.test.ts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { load as loadYaml, loadAll } from 'js-yaml';
import { KubeApi } from '../../src/cluster/kube-api.js';
import { DebugPods } from '../../src/cluster/nodes/debug-pod.js';
import { permissions, type Grant } from '../../src/cluster/permissions.js';
import { readSnapshot } from '../../src/cluster/snapshot/read.js';
import type { KubeObject } from '../../src/core/model.js';
import { kdebug as kdebugAt, kdebugAsync } from '../support/cli.js';
import type { RbacRule } from '../support/fake-api/rbac.js';
import { parseApiPath } from '../support/fake-api/resources.js';

/** kdebug on a wide terminal: the comments these tests read each on one line (widths.test.ts
 * checks their wrapping). */
const kdebug = (args: string[], o: Parameters<typeof kdebugAt>[1] = {}) =>
  kdebugAt(args, { ...o, env: { COLUMNS: '200', ...o.env } });
import { startFakeApi, type FakeApi, type RequestRecord } from '../support/fake-api/server.js';

const USER = 'dev';
const DEBUG_NS = 'kdebug';
const AUTO = ['rbac', '-n', 'default', '--via', 'auto', '--debug-namespace', DEBUG_NS];

/** The printed YAML's documents. */
const docsOf = (yaml: string) =>
  loadAll(yaml) as {
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string> };
    rules?: unknown[];
  }[];

/** The grants as the fake's table for USER (resource names are checked on the records instead). */
const table = (grants: Grant[]): RbacRule[] =>
  grants.flatMap((g) =>
    g.rules.map((r) => ({
      users: [USER],
      verbs: r.verbs,
      resources: [`${r.resource}${r.group ? `.${r.group}` : ''}`],
      ...(g.namespace ? { namespaces: [g.namespace] } : {}),
    })),
  );

/** The printed rule (and verb) a request falls under, resource names included, if any. */
function ruleFor(grants: Grant[], r: RequestRecord, verb: string) {
  const p = parseApiPath(r.path)!;
  const resource = `${p.type.resource}${p.subresource ? `/${p.subresource}` : ''}`;
  for (const g of grants) {
    if (g.namespace !== undefined && g.namespace !== p.namespace) continue;
    for (const rule of g.rules)
      if (
        rule.group === p.type.group &&
        rule.resource === resource &&
        rule.verbs.includes(verb) &&
        (!rule.names || (p.name !== undefined && rule.names.includes(p.name)))
      )
        return `${g.namespace ?? '(cluster)'} ${rule.group}/${rule.resource} ${verb}${rule.names ? ` ${rule.names}` : ''}`;
  }
  return undefined;
}

/** Every verb of every printed rule, named as ruleFor names them (one name list per rule). */
const everyVerb = (grants: Grant[]) =>
  grants.flatMap((g) =>
    g.rules.flatMap((rule) =>
      rule.verbs.map(
        (v) =>
          `${g.namespace ?? '(cluster)'} ${rule.group}/${rule.resource} ${v}${rule.names ? ` ${rule.names}` : ''}`,
      ),
    ),
  );

/** Requests kdebug may make without a grant: courtesy reads it does without when refused. */
const courtesy = (r: RequestRecord) =>
  // "did you mean" looks for the Service in other namespaces too, when the user may list them
  (r.path === '/api/v1/services' && r.method === 'GET') ||
  // an endpoint address no Pod is named for, looked up in every namespace: refused, not judged
  (r.path === '/api/v1/pods' && /^status\.podIP=/.test(r.query.get('fieldSelector') ?? '')) ||
  r.path.endsWith('/selfsubjectaccessreviews'); // every user has it (system:basic-user)

describe('kdebug rbac: exactly what kdebug asks of the API server', () => {
  let fake: FakeApi;
  let kubeconfig: string;
  let tmp: string;
  const grants = permissions({
    namespace: 'default',
    via: ['kube-proxy', 'pod', 'ssh'],
    debugNamespace: DEBUG_NS,
  });
  before(async () => {
    const served = await readSnapshot('snapshots/nginx-svc');
    // one endpoint's Pod lost its label: kdebug reads it by name (get pods)
    const unlabelled = served.objects.map((o) =>
      o.kind === 'Pod' && o.metadata?.name === 'nginx-55fc968d9-kh24k'
        ? { ...o, metadata: { ...o.metadata, labels: { app: 'nginx-old' } } }
        : o,
    );
    // and an address written by hand, no Pod named: kdebug looks it up in every namespace
    const slice = unlabelled.find(
      (o) =>
        o.kind === 'EndpointSlice' &&
        o.metadata?.labels?.['kubernetes.io/service-name'] === 'nginx-svc',
    ) as KubeObject & { endpoints: unknown[] };
    slice.endpoints = [
      ...slice.endpoints,
      { addresses: ['10.244.1.99'], conditions: { ready: true } },
    ];
    // the debug Pods' namespace, as the admin applied it from the printed YAML
    const namespace = docsOf(kdebug(AUTO).stdout).find((d) => d.kind === 'Namespace')!;
    fake = await startFakeApi({
      objects: [...unlabelled, namespace],
      tokens: { 'dev-token': USER },
      rbac: { allow: table(grants) },
      exec: (req) => ({
        stdout: req.command.includes('iptables-save') ? '*nat\nCOMMIT\n' : '',
        exitCode: 0,
      }),
    });
    kubeconfig = fake.kubeconfig({ user: USER, namespace: 'default' });
    tmp = mkdtempSync(join(tmpdir(), 'kdebug-rbac-'));
  });
  after(async () => {
    await fake.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('prints YAML that parses into the Roles and bindings it says', () => {
    const r = kdebug([...AUTO, '--user', USER]);
    assert.equal(r.code, 0, r.stderr);
    const docs = docsOf(r.stdout);
    assert.deepEqual(
      docs.map((d) => `${d.kind} ${d.metadata.namespace ?? ''}/${d.metadata.name}`),
      [
        // first: kubectl apply makes the namespace before the Role in it
        'Namespace /kdebug',
        'ClusterRole /kdebug',
        'ClusterRoleBinding /kdebug',
        'Role default/kdebug',
        'RoleBinding default/kdebug',
        'Role kube-system/kdebug',
        'RoleBinding kube-system/kdebug',
        'Role kdebug/kdebug',
        'RoleBinding kdebug/kdebug',
      ],
    );
    assert.deepEqual(docs[0]!.metadata.labels, {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'app.kubernetes.io/managed-by': 'kdebug',
    });
    // the YAML holds the very grants the test serves
    const printed = docs
      .filter((d) => d.rules)
      .map((d) => ({
        namespace: d.metadata.namespace,
        rules: (
          d.rules as {
            apiGroups: string[];
            resources: string[];
            verbs: string[];
            resourceNames?: string[];
          }[]
        ).map((x) => ({
          group: x.apiGroups[0],
          resource: x.resources[0],
          verbs: x.verbs,
          names: x.resourceNames,
        })),
      }));
    assert.deepEqual(
      printed,
      grants.map((g) => ({
        namespace: g.namespace,
        rules: g.rules.map((x) => ({
          group: x.group,
          resource: x.resource,
          verbs: x.verbs,
          names: x.names,
        })),
      })),
    );
    assert.equal(loadYaml(kdebug(['rbac']).stdout.split('---\n')[1]!) !== undefined, true);
  });

  it('the commands run as that user are never refused, ask for nothing more, and use every verb', async () => {
    const env = { KUBECONFIG: kubeconfig };
    const runs = [
      await kdebugAsync(['svc', 'nginx-svc', '-o', 'json', '--via', 'kube-proxy'], env),
      await kdebugAsync(['svc', 'nginx-sv', '-o', 'json', '--via', 'kube-proxy'], env),
      await kdebugAsync(
        ['snapshot', 'save', join(tmp, 'all'), '--all', '--via', 'kube-proxy'],
        env,
      ),
      await kdebugAsync(
        [
          'snapshot',
          'save',
          join(tmp, 'pod'),
          '--service',
          'nginx-svc',
          '--via',
          'pod',
          '--yes',
          '--debug-namespace',
          DEBUG_NS,
        ],
        env,
      ),
      await kdebugAsync(['cleanup', '-n', DEBUG_NS], env),
      // SSH reads the Node, finds no Hostname address and connects to nothing
      await kdebugAsync(
        ['svc', 'nginx-svc', '-o', 'json', '--via', 'ssh', '--ssh-address-type', 'Hostname'],
        env,
      ),
    ];
    for (const r of runs) assert.doesNotMatch(r.stderr, /access denied|forbidden/i, r.stderr);
    assert.deepEqual(
      runs.map((r) => r.code),
      [1, 1, 0, 0, 0, 1],
      runs.map((r) => r.stderr).join('\n'),
    );
    // the lease's renewal, which a short CLI run does not live long enough to make
    const api = await KubeApi.connect({ kubeconfig, env: {} });
    const pods = new DebugPods(api, {
      yes: true,
      namespace: DEBUG_NS,
      renewEveryMs: 30,
      timeoutMs: 3000,
    });
    await pods.open('vm-12-7-centos');
    await new Promise((r) => setTimeout(r, 100));
    await pods.close();
    api.close();

    const refused = fake.requests.filter((r) => r.refused && !courtesy(r));
    assert.deepEqual(
      refused.map((r) => `${r.method} ${r.path}`),
      [],
    );
    const used = new Set<string>();
    const outside: string[] = [];
    for (const r of fake.requests) {
      if (r.path.endsWith('/selfsubjectaccessreviews'))
        used.add('(cluster) authorization.k8s.io/selfsubjectaccessreviews create');
      if (courtesy(r) || !r.authorized) continue;
      for (const a of r.authorized) {
        const rule = ruleFor(grants, r, a.verb);
        if (rule) used.add(rule);
        else outside.push(`${a.verb} ${r.path}`);
      }
    }
    assert.deepEqual(outside, [], 'requests no printed rule covers');
    assert.deepEqual(
      everyVerb(grants).filter((v) => !used.has(v)),
      [],
      'printed verbs no request used',
    );
  });

  it('says plainly what exec in kube-system grants (--via kube-proxy), never "that Pod"', () => {
    const r = kdebug(['rbac', '--via', 'kube-proxy']);
    assert.equal(r.code, 0, r.stderr);
    const said = r.stdout.replace(/\n\s*# /g, ' ');
    assert.match(
      said,
      /This grant lets the holder exec into every Pod in kube-system \(etcd and the API server where they run as Pods\): near cluster-admin\. RBAC cannot narrow it to the kube-proxy Pods: their names are generated and change with every rollout\. Prefer --via pod in a dedicated namespace, or --via ssh\./,
    );
    // the rule's own comment says it too, next to the grant
    assert.match(
      r.stdout,
      /# lets the holder exec into every Pod in kube-system \(etcd and the API server where they run as Pods\): near cluster-admin\.\n.*\n.*\n {2}- apiGroups: \[""\]\n {4}resources: \["pods\/exec"\]\n {4}verbs: \["get", "create"\]/,
    );
    assert.doesNotMatch(r.stdout, /that Pod/);
    assert.doesNotMatch(r.stdout, /kind: Namespace/, 'no debug namespace without --via pod');
  });

  it("says how a Cilium agent's tables are read, whatever --via: exec in its Pods, granted by --via kube-proxy only", () => {
    for (const via of [[], ['--via', 'pod'], ['--via', 'ssh']])
      assert.match(
        kdebug(['rbac', ...via]).stdout,
        /^# Where Cilium replaces kube-proxy, its agent's tables are read by exec in its Pods in kube-system: that needs --via kube-proxy's pods\/exec there; without it those nodes are said not read\.$/m,
      );
    assert.match(
      kdebug(['rbac', '--via', 'kube-proxy']).stdout,
      /^# Where Cilium replaces kube-proxy, the same grant reads its agent's tables/m,
    );
  });

  it('says what --via pod grants, and warns when the debug namespace is shared', () => {
    const own = kdebug(['rbac', '--via', 'pod']);
    assert.match(
      own.stdout.replace(/\n# /g, ' '),
      /Creating Pods there is root on every node, and exec reaches every Pod there \(the debug Pods' names are generated, so resourceNames cannot name them\): keep the namespace for kdebug alone\./,
    );
    assert.match(own.stdout, /^kind: Namespace$/m);
    const shared = kdebug([
      'rbac',
      '-n',
      'default',
      '--via',
      'pod',
      '--debug-namespace',
      'default',
    ]);
    assert.match(
      shared.stdout,
      /^# default is not kdebug's own namespace \(kdebug\): label it yourself \(kubectl label namespace default pod-security\.kubernetes\.io\/enforce=privileged\) and keep other workloads out of it\.$/m,
    );
    assert.match(
      shared.stdout,
      /^# default is also the Services' namespace: this Role can exec into every workload there\. Give debug Pods a namespace of their own\.$/m,
    );
    // never relabel a namespace kdebug does not own
    assert.doesNotMatch(shared.stdout, /kind: Namespace/);
  });

  it('refuses what cannot be granted as asked', () => {
    const both = kdebug(['rbac', '-A', '-n', 'x']);
    assert.deepEqual(
      [both.code, both.stderr],
      [2, 'kdebug: choose one: -n NAMESPACE or -A/--all-namespaces\n'],
    );
    const sa = kdebug(['rbac', '--serviceaccount', 'justname']);
    assert.deepEqual(
      [sa.code, sa.stderr],
      [2, 'kdebug: --serviceaccount takes NAMESPACE:NAME, as kubectl does\n'],
    );
    const json = kdebug(['rbac', '-o', 'json']);
    assert.deepEqual(
      [json.code, json.stderr],
      [2, 'kdebug: rbac prints Kubernetes YAML; use -o text\n'],
    );
  });
});
