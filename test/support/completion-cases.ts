// What TAB offers after each line, whichever shell asks: the bash, zsh and fish tests share it.
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
];
