// What TAB offers after each line, whichever shell asks: the bash, zsh and fish tests share it.
// After `--flag=` the offers are the values: each shell shows them as its own completion does.
import { readdirSync } from 'node:fs';

const KUBECONFIG = 'test/fixtures/kubeconfig-contexts.yaml';
const SCENARIOS = readdirSync(new URL('../../snapshots', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

export const COMPLETION_CASES: { typed: string; offers: string[] }[] = [
  { typed: 'kdebug sv', offers: ['svc'] },
  { typed: 'kdebug svc --snapshot snapshots/nginx-svc ng', offers: ['nginx-svc'] },
  // kubectl's names for the resource complete as svc does
  { typed: 'kdebug service --snapshot snapshots/nginx-svc ng', offers: ['nginx-svc'] },
  { typed: 'kdebug services --snapshot snapshots/nginx-svc -n kube', offers: ['kube-system'] },
  { typed: 'kdebug svc --namespace kube', offers: [] }, // no cluster here: nothing, quickly
  { typed: 'kdebug svc web --output js', offers: ['json'] },
  { typed: 'kdebug svc --snapshot snapshots/nginx-svc -n kube', offers: ['kube-system'] },
  // NS/NAME, as kubectl takes it
  {
    typed: 'kdebug svc --snapshot snapshots/nginx-svc kube-system/kube',
    offers: ['kube-system/kube-dns'],
  },
  {
    typed: 'kdebug drift --snapshot snapshots/nginx-svc --node vm-12-7',
    offers: ['vm-12-7-centos'],
  },
  { typed: 'kdebug svc web -o j', offers: ['json'] },
  { typed: 'kdebug svc web', offers: [] }, // no cluster here: nothing, quickly
  // a flag's value after =, as kubectl (cobra) takes it; and an attached short flag's (pflag)
  { typed: 'kdebug svc --snapshot snapshots/nginx-svc --namespace=kube', offers: ['kube-system'] },
  { typed: 'kdebug svc --snapshot snapshots/nginx-svc -n=', offers: ['default', 'kube-system'] },
  { typed: 'kdebug svc --snapshot=snapshots/nginx-svc ', offers: ['kubernetes', 'nginx-svc'] },
  { typed: 'kdebug svc --snapshot snapshots/nginx-svc -nkube-system ', offers: ['kube-dns'] },
  { typed: 'kdebug svc web -o=j', offers: ['json'] },
  { typed: `kdebug svc --kubeconfig=${KUBECONFIG} --context admin@s`, offers: ['admin@staging'] },
  {
    typed: `kdebug svc --kubeconfig ${KUBECONFIG} --context=admin@`,
    offers: ['admin@prod', 'admin@staging'],
  },
  // -A: every namespace's Services, NS/NAME
  {
    typed: 'kdebug svc --snapshot snapshots/nginx-svc -A ',
    offers: ['default/kubernetes', 'default/nginx-svc', 'kube-system/kube-dns'],
  },
  { typed: 'kdebug svc -A --snapshot snapshots/nginx-svc kube', offers: ['kube-system/kube-dns'] },
  // the bundled scenarios, the shells
  { typed: 'kdebug demo ', offers: SCENARIOS },
  { typed: 'kdebug demo sel', offers: ['selector-typo'] },
  { typed: 'kdebug completion ', offers: ['bash', 'fish', 'zsh'] },
];
