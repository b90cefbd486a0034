# Runs inside the VM (vm.sh, started by kube-proxy.ts): the lab's kube-proxy (whichever release
# the lab runs) in IPVS mode as node node-a, against the lab's API server (192.0.2.10, qemu's
# user networking), until what it programs stops changing; then records what kdebug reads from an
# IPVS node, one file a command, under the stems of a snapshot's nodes/<node>/
# (src/core/nodes/commands.ts commandStem).
set -uo pipefail
out=$PWD
# the node's own address as the lab gives node-a (the guest's eth0 holds it too; its IPv6 one in a
# dual-stack lab, given in node-ip6)
six=/etc/kube-proxy/node-ip6
[[ -f $six ]] && ip -6 addr add "$(cat $six)" dev eth0 nodad
kube-proxy --config=/etc/kube-proxy/config.conf --hostname-override=node-a \
  >"$out/kube-proxy-log.txt" 2>&1 &
proxy=$!
# settled: the kube-dns virtual server is there, the IPv6 proxier's rules too where it runs (it
# restores them after its ipsets; under emulation its first sync can end minutes after the IPv4
# one's), and listings a few seconds apart agree
last='' settled=0
for _ in $(seq 1 120); do
  sleep 3
  kill -0 $proxy 2>/dev/null || { echo "kube-proxy exited" >&2; tail -20 "$out/kube-proxy-log.txt" >&2; exit 1; }
  now=$(ipvsadm-save -n 2>/dev/null; ipset list -o save 2>/dev/null; ip6tables-save -t nat 2>/dev/null | grep '^-A')
  v6=true
  grep -q 'dual-stack mode' "$out/kube-proxy-log.txt" && [[ $now != *'-A KUBE-POSTROUTING'* ]] && v6=false
  # dual-stack: an IPv6 Service's virtual server too (the matrix's are all dual-stack)
  [[ -f $six && $now != *'[fd00:10:96::'* ]] && v6=false
  if [[ $now == *10.96.0.10:53* && $v6 == true && $now == "$last" ]]; then settled=$((settled + 1)); else settled=0; fi
  [[ $settled -ge 3 ]] && break
  last=$now
done
[[ $settled -ge 3 ]] || echo "kube-proxy's IPVS state did not settle in 6 minutes" >&2
ipvsadm-save -n >"$out/ipvsadm-save.txt"
ipvsadm -Ln >"$out/ipvsadm-list.txt"
ipset list -o save >"$out/ipset-save.txt"
ip -o addr show kube-ipvs0 >"$out/ip-o-addr-kube-ipvs0.txt"
ip -br addr >"$out/ip-addr.txt"
iptables-save >"$out/iptables-save.txt"
ip6tables-save >"$out/ip6tables-save.txt"
cat /proc/net/ip_vs_stats >"$out/ip_vs_stats.txt"
wget -q -O "$out/proxy-mode.txt" http://127.0.0.1:10249/proxyMode
wget -q -O "$out/proxy-configz.txt" http://127.0.0.1:10249/configz
# its build info: the release kdebug reads, as from a node's kube-proxy
wget -q -O "$out/proxy-metrics.txt" http://127.0.0.1:10249/metrics
# one Service's reads by address (kdebug svc): every virtual server listed by its address and every
# ipset entry tested, each command's stdout, stderr and exit code as targeted/N.txt, .stderr and
# .rc, named in targeted/index.tsv
mkdir -p "$out/targeted"
n=0
rec() {
  n=$((n + 1))
  local f=$out/targeted/$n rc=0
  "$@" >"$f.txt" 2>"$f.stderr" || rc=$?
  echo "$rc" >"$f.rc"
  printf '%s\t%s\n' "$n" "$*" >>"$out/targeted/index.tsv"
}
ipvsadm-save -n >/tmp/ipvsadm-save && ipset save >/tmp/ipset-save
while read -r op flag address _; do
  [[ $op == -A ]] && rec ipvsadm -Ln "$flag" "$address"
done </tmp/ipvsadm-save
while read -r op set entry _; do
  [[ $op == add ]] && rec ipset test "$set" "$entry"
done </tmp/ipset-save
# and a virtual server and an entry that are not there
rec ipvsadm -Ln -u 10.96.0.1:443
rec ipset test KUBE-CLUSTER-IP 10.96.0.1,udp:443
{
  echo "kernel $(uname -r)"
  ipvsadm --version
  ipset --version
  iptables --version
  kube-proxy --version
} >"$out/versions.txt"
kill $proxy
