// The objects the fault suite creates in namespace "faults", one broken Service each, beside a
// healthy one ("web"): every fault is made through the API or on a node, never in a snapshot.
import { deployment, manifest, namespace, service as svc, type AppOptions } from './objects.js';

export const FAULTS_NAMESPACE = 'faults';

const app = (name: string, o: AppOptions = {}) => deployment(FAULTS_NAMESPACE, name, o);
const service = (name: string, spec: string) => svc(FAULTS_NAMESPACE, name, spec);

export const FAULT_OBJECTS = manifest(
  namespace(FAULTS_NAMESPACE),
  // a namespace whose Pod Security refuses kdebug's privileged debug Pod
  namespace('locked', '{pod-security.kubernetes.io/enforce: restricted}'),
  app('web'),
  app('scaled'),
  // its readiness check asks a port nothing listens on
  app('unready', { replicas: 1, readinessPort: 81 }),
  app('solo', { replicas: 1, node: 'node-a' }),
  service('web', 'selector: {app: web}\nports: [{name: http, port: 80, targetPort: http}]'),
  service('typo', 'selector: {app: wbe}\nports: [{name: http, port: 80, targetPort: 80}]'),
  service('wrong-port', 'selector: {app: web}\nports: [{name: http, port: 80, targetPort: 8081}]'),
  service('unready', 'selector: {app: unready}\nports: [{name: http, port: 80, targetPort: 80}]'),
  service('scaled', 'selector: {app: scaled}\nports: [{name: http, port: 80, targetPort: 80}]'),
  service(
    'local',
    'type: NodePort\nexternalTrafficPolicy: Local\nselector: {app: solo}\nports: [{name: http, port: 80, targetPort: 80}]',
  ),
);
