// The faults cilium-ref makes in the real BPF maps of the truth matrix's node-a after Cilium
// reconciled (its --fault flag, faults.go), each on a Service of its own so that each finding
// names one: recorded in test/fixtures/cilium/reference/faults-node-a by record.ts, made live
// by test/lab-cluster/cilium.cluster.test.ts.
export const FAULTS = [
  // matrix/cluster-ip's last backend slot deleted: its service entry still counts two
  'slot=10.96.128.212:80/TCP',
  // kube-dns's metrics backend entry deleted: its slot names a backend ID that is gone
  'backend=10.244.1.2:9153/TCP',
  // matrix/multi-port's https slot 1 pointed at a backend ID that never existed
  'dangling=10.96.163.181:443/TCP',
  // the kubernetes Service's frontend gone from the service map, its own entry and its slot
  'frontend=10.96.0.1:443/TCP',
];
