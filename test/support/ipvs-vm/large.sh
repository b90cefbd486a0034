# Runs inside the VM (vm.sh): a large kube-proxy-like IPVS state in a real kernel, and what one
# Service's answer reads of it by address (kdebug svc) against the whole listings, in bytes (stdout
# and stderr) and seconds (under qemu's emulation: slow, but alike for both):
#
#   test/support/ipvs-vm/vm.sh test/support/ipvs-vm/large.sh
#
# SERVICES Services (default 10,000), each a cluster IP with 3 real servers; every fifth a NodePort
# Service too, its virtual server on each of the node's 2 addresses; kube-proxy's ipsets with
# their entries and kube-ipvs0 with every cluster IP, as kube-proxy writes them.
set -euo pipefail
n=${SERVICES:-10000}
ip link add kube-ipvs0 type dummy
ip link add node0 type dummy && ip link set node0 up
ip addr add 192.168.0.10/24 dev node0 && ip addr add 10.244.0.1/32 dev node0
nodes='192.168.0.10 10.244.0.1'
# Service i: cluster IP 10.96.(i/256).(i%256), endpoints 10.244.(i%250).{1,2,3}:(8000 + i/250), node
# port 30000 + i/5 for every fifth; the node's own endpoint is the first of every tenth Service
awk -v n="$n" -v nodes="$nodes" 'BEGIN {
  split(nodes, node, " ")
  for (i = 1; i <= n; i++) {
    vip = sprintf("10.96.%d.%d", int(i / 256), i % 256)
    vs[1] = vip ":80"; k = 1; port = 8000 + int(i / 250)
    if (i % 5 == 0) for (a in node) vs[++k] = node[a] ":" 30000 + i / 5
    for (v = 1; v <= k; v++) {
      print "-A -t " vs[v] " -s rr" > "/tmp/ipvs"
      for (e = 1; e <= 3; e++) print "-a -t " vs[v] " -r 10.244." i % 250 "." e ":" port " -m -w 1" > "/tmp/ipvs"
    }
    print "add KUBE-CLUSTER-IP " vip ",tcp:80" > "/tmp/sets"
    print "add KUBE-IPVS-IPS " vip > "/tmp/sets"
    if (i % 5 == 0) print "add KUBE-NODE-PORT-TCP " 30000 + i / 5 > "/tmp/sets"
    if (i % 10 == 0) print "add KUBE-LOOP-BACK 10.244." i % 250 ".1,tcp:" port ",10.244." i % 250 ".1" > "/tmp/sets"
    print "address add " vip "/32 dev kube-ipvs0" > "/tmp/addrs"
  }
}'
ipvsadm-restore </tmp/ipvs
{
  echo "create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536"
  echo "create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536"
  echo "create KUBE-NODE-PORT-TCP bitmap:port range 0-65535"
  echo "create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536"
  cat /tmp/sets
} | ipset restore
ip -batch /tmp/addrs

# one NodePort Service with a local endpoint: the reads kdebug svc makes for it by address
i=$(((n / 10) * 10))
vip=10.96.$((i / 256)).$((i % 256)) np=$((30000 + i / 5)) ep=10.244.$((i % 250)).1 port=$((8000 + i / 250))
targeted=(
  "ipvsadm -Ln -t $vip:80"
  "ipvsadm -Ln -t 192.168.0.10:$np"
  "ipvsadm -Ln -t 10.244.0.1:$np"
  "ipset test KUBE-LOOP-BACK $ep,tcp:$port,$ep"
  "ipset test KUBE-CLUSTER-IP $vip,tcp:80"
  "ipset test KUBE-NODE-PORT-TCP $np"
  "ipset test KUBE-IPVS-IPS $vip"
)
whole=("ipvsadm-save -n" "ipset list -o save")
basics=("ip -br addr")
# seconds from /proc/uptime: busybox's date has no fraction of a second
now() { cut -d' ' -f1 /proc/uptime; }
measure() {
  local total=0 c bytes t0 t1
  for c in "$@"; do
    t0=$(now)
    bytes=$($c 2>&1 | wc -c)
    t1=$(now)
    total=$((total + bytes))
    printf '  %9d bytes %6.2fs  %s\n' "$bytes" "$(awk "BEGIN {print $t1 - $t0}")" "$c"
  done
  printf '  %9d bytes in all\n' "$total"
}
echo "$n Services, $((n / 5)) of them NodePort on 2 node addresses; the Service read: $vip:80, node port $np"
echo "by address (kdebug svc):"
measure "${targeted[@]}"
echo "whole (snapshot save, rules, drift; svc before):"
measure "${whole[@]}"
echo "read either way (the node's addresses, kube-ipvs0's among them):"
measure "${basics[@]}"
