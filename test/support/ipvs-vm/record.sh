# Runs inside the VM (vm.sh): writes a kube-proxy-like IPVS configuration into a real kernel, sends
# traffic through it (so connections and counters are real), and records what ipvsadm and ipset
# print, one file a command, into the current directory (test/fixtures/ipvs-live/ on the host):
#
#   test/support/ipvs-vm/vm.sh test/support/ipvs-vm/record.sh test/fixtures/ipvs-live
#
# Addresses: Services 10.96.0.0/16 and fd00:10:96::/112, Pods 10.244.0.0/16 and fd00:10:244::/48
# (all in one network namespace, "pods", behind a veth), the node 192.168.0.10 (node-a).
set -euo pipefail
out=$PWD

# the node: kube-proxy's dummy interface holds every Service IP; the node address on another
ip link add kube-ipvs0 type dummy
ip link add node0 type dummy && ip link set node0 up && ip addr add 192.168.0.10/24 dev node0
for a in 10.96.0.10 10.96.0.20 10.96.0.30 10.96.0.40 10.96.0.50 10.96.0.60 10.96.0.70; do
  ip addr add $a/32 dev kube-ipvs0
done
ip addr add fd00:10:96::a/128 dev kube-ipvs0 nodad
printf '127.0.0.1 localhost\n::1 localhost\n192.168.0.10 node-a\n' >/etc/hosts

# the Pods: one namespace holding every Pod address, serving HTTP on 8080 and 8443
mkdir -p /var/run && ip netns add pods
ip link add veth-pods type veth peer name eth0 netns pods
ip link set veth-pods up && ip addr add 10.244.0.1/32 dev veth-pods
ip -6 addr add fd00:10:244::1/128 dev veth-pods nodad
ip route add 10.244.0.0/16 dev veth-pods && ip -6 route add fd00:10:244::/48 dev veth-pods
pods=(10.244.0.2 10.244.0.3 10.244.1.4 10.244.2.5 10.244.3.6 10.244.1.7 10.244.2.8 10.244.1.9
  10.244.2.10 10.244.3.11 10.244.3.12 10.244.1.13)
ip -n pods link set lo up && ip -n pods link set eth0 up
for a in "${pods[@]}"; do ip -n pods addr add $a/32 dev eth0; done
for a in fd00:10:244:1::4 fd00:10:244:2::5; do ip -n pods addr add $a/128 dev eth0 nodad; done
ip -n pods route add 10.244.0.1 dev eth0 && ip -n pods route add default via 10.244.0.1
ip -n pods -6 route add fd00:10:244::1 dev eth0 && ip -n pods -6 route add default via fd00:10:244::1
mkdir -p /www && echo ok >/www/index.html
ip netns exec pods busybox httpd -p 8080 -h /www
ip netns exec pods busybox httpd -p 8443 -h /www

# the virtual servers, as kube-proxy writes them (Masq, weight 1; 0 for a terminating endpoint)
A() { ipvsadm -A "$@"; }
a() { ipvsadm -a "$@" -m -w "${W:-1}"; }
# default/web:http, cluster IP, rr, one endpoint terminating (weight 0)
A -t 10.96.0.30:80 -s rr
a -t 10.96.0.30:80 -r 10.244.1.4:8080
a -t 10.96.0.30:80 -r 10.244.2.5:8080
W=0 a -t 10.96.0.30:80 -r 10.244.3.6:8080
# its node port 30080 on the node address and on 127.0.0.1
for vip in 192.168.0.10 127.0.0.1; do
  A -t $vip:30080 -s rr
  a -t $vip:30080 -r 10.244.1.4:8080
  a -t $vip:30080 -r 10.244.2.5:8080
done
# default/sticky:https, ClientIP session affinity (persistence 10800 s)
A -t 10.96.0.20:443 -s rr -p 10800
a -t 10.96.0.20:443 -r 10.244.1.7:8443
a -t 10.96.0.20:443 -r 10.244.2.8:8443
# kube-system/kube-dns: dns (UDP 53) and dns-tcp (TCP 53)
A -u 10.96.0.10:53 -s rr
a -u 10.96.0.10:53 -r 10.244.0.2:53
a -u 10.96.0.10:53 -r 10.244.0.3:53
A -t 10.96.0.10:53 -s rr
a -t 10.96.0.10:53 -r 10.244.0.2:53
a -t 10.96.0.10:53 -r 10.244.0.3:53
# default/empty:http, no endpoints
A -t 10.96.0.40:8080 -s rr
# default/cache:redis, source hashing
A -t 10.96.0.50:6379 -s sh
a -t 10.96.0.50:6379 -r 10.244.1.9:6379
a -t 10.96.0.50:6379 -r 10.244.2.10:6379
# default/weighted:http, wrr with weights 3 and 1 (not kube-proxy's: by hand)
A -t 10.96.0.60:80 -s wrr
W=3 a -t 10.96.0.60:80 -r 10.244.3.11:8080
W=1 a -t 10.96.0.60:80 -r 10.244.3.12:8080
# default/sctp:sctp
A --sctp-service 10.96.0.70:9999 -s rr
a --sctp-service 10.96.0.70:9999 -r 10.244.1.13:9999
# default/web6:http, IPv6 cluster IP
A -t '[fd00:10:96::a]:80' -s rr
a -t '[fd00:10:96::a]:80' -r '[fd00:10:244:1::4]:8080'
a -t '[fd00:10:96::a]:80' -r '[fd00:10:244:2::5]:8080'
# firewall mark 1481, IPv4 and IPv6 (kube-router's DSR, keepalived: not kube-proxy's)
A -f 1481 -s rr
a -f 1481 -r 10.244.1.4:8080
a -f 1481 -r 10.244.2.5:8080
A -f 1481 -6 -s rr
a -f 1481 -6 -r '[fd00:10:244:1::4]:8080'

# traffic: connections through the virtual servers from the node itself (IPVS takes a local
# client's packets in LOCAL_OUT), so -Lnc, --stats and --rate have something to show
for _ in 1 2 3 4; do
  wget -q -O /dev/null http://10.96.0.30:80/ || true
  wget -q -O /dev/null http://192.168.0.10:30080/ || true
  wget -q -O /dev/null http://[fd00:10:96::a]:80/ || true
done
wget -q -O /dev/null --no-check-certificate http://10.96.0.20:443/ || true
echo query >/dev/udp/10.96.0.10/53 || true # the Pod serves no DNS: the entry is made anyway
sleep 5 # the rate estimator's 2-second period, twice

# kube-proxy's ipsets (pkg/proxy/ipvs/ipset.go: names, types, create options, entry forms)
ipset create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536
for e in 10.96.0.10,udp:53 10.96.0.10,tcp:53 10.96.0.20,tcp:443 10.96.0.30,tcp:80 \
  10.96.0.40,tcp:8080 10.96.0.50,tcp:6379 10.96.0.60,tcp:80 10.96.0.70,sctp:9999; do
  ipset add KUBE-CLUSTER-IP $e
done
ipset create KUBE-6-CLUSTER-IP hash:ip,port family inet6 hashsize 1024 maxelem 65536
ipset add KUBE-6-CLUSTER-IP fd00:10:96::a,tcp:80
ipset create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536
for e in 10.244.1.4,tcp:8080,10.244.1.4 10.244.2.5,tcp:8080,10.244.2.5 10.244.0.2,udp:53,10.244.0.2; do
  ipset add KUBE-LOOP-BACK $e
done
ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
ipset add KUBE-NODE-PORT-TCP 30080
ipset create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536
for a in 10.96.0.10 10.96.0.20 10.96.0.30 10.96.0.40 10.96.0.50 10.96.0.60 10.96.0.70; do
  ipset add KUBE-IPVS-IPS $a
done

# the recordings: NAME.txt is the command's stdout; a failing command's stderr and exit code too
# (NAME.stderr, NAME.rc); index.tsv names each file's command
rec() {
  local name=$1 rc=0
  shift
  "$@" >"$out/$name.txt" 2>"$out/$name.stderr" || rc=$?
  [[ -s $out/$name.stderr || $rc != 0 ]] || rm "$out/$name.stderr"
  [[ $rc == 0 ]] || echo "$rc" >"$out/$name.rc"
  printf '%s\t%s\n' "$name" "$*" >>"$out/index.tsv"
}
: >"$out/index.tsv"
rec ipvsadm-Ln ipvsadm -Ln
rec ipvsadm-L ipvsadm -L
rec ipvsadm-Ln-stats ipvsadm -Ln --stats
rec ipvsadm-Ln-rate ipvsadm -Ln --rate
rec ipvsadm-Ln-exact ipvsadm -Ln --exact
rec ipvsadm-Ln-stats-exact ipvsadm -Ln --stats --exact
rec ipvsadm-Ln-sort ipvsadm -Ln --sort
rec ipvsadm-Ln-persistent-conn ipvsadm -Ln --persistent-conn
rec ipvsadm-Ln-thresholds ipvsadm -Ln --thresholds
rec ipvsadm-Lnc ipvsadm -Lnc
rec ipvsadm-Ln-timeout ipvsadm -Ln --timeout
rec ipvsadm-save-n ipvsadm-save -n
rec ipvsadm-save ipvsadm-save
rec ipvsadm-Ln-t-cluster-ip ipvsadm -Ln -t 10.96.0.30:80
rec ipvsadm-Ln-t-persistent ipvsadm -Ln -t 10.96.0.20:443
rec ipvsadm-Ln-u-dns ipvsadm -Ln -u 10.96.0.10:53
rec ipvsadm-Ln-t-ipv6 ipvsadm -Ln -t '[fd00:10:96::a]:80'
rec ipvsadm-Ln-f ipvsadm -Ln -f 1481
rec ipvsadm-Ln-t-missing ipvsadm -Ln -t 10.96.0.99:80
rec ipvsadm-Ln-u-missing ipvsadm -Ln -u 10.96.0.30:80
rec ipset-list ipset list
rec ipset-save ipset save
rec ipset-list-o-save ipset list -o save
rec ip-addr-kube-ipvs0 ip -o addr show kube-ipvs0
rec ip-br-addr ip -br addr
rec proc-net-ip_vs cat /proc/net/ip_vs
rec proc-net-ip_vs_stats cat /proc/net/ip_vs_stats
# one Service's reads by address (kdebug svc on a large cluster): a node port's and an SCTP virtual
# server, ones that are not there; ipset test of an entry held, one not held, a set not there
rec ipvsadm-Ln-t-node-port ipvsadm -Ln -t 192.168.0.10:30080
rec ipvsadm-Ln-sctp ipvsadm -Ln --sctp-service 10.96.0.70:9999
rec ipvsadm-Ln-sctp-missing ipvsadm -Ln --sctp-service 10.96.0.70:9998
rec ipvsadm-Ln-t-ipv6-missing ipvsadm -Ln -t '[fd00:10:96::b]:80'
rec ipset-test-cluster-ip ipset test KUBE-CLUSTER-IP 10.96.0.30,tcp:80
rec ipset-test-cluster-ip-missing ipset test KUBE-CLUSTER-IP 10.96.0.99,tcp:80
rec ipset-test-loop-back ipset test KUBE-LOOP-BACK 10.244.1.4,tcp:8080,10.244.1.4
rec ipset-test-loop-back-missing ipset test KUBE-LOOP-BACK 10.244.3.6,tcp:8080,10.244.3.6
rec ipset-test-node-port ipset test KUBE-NODE-PORT-TCP 30080
rec ipset-test-node-port-missing ipset test KUBE-NODE-PORT-TCP 30081
rec ipset-test-ipvs-ips ipset test KUBE-IPVS-IPS 10.96.0.30
rec ipset-test-ipv6 ipset test KUBE-6-CLUSTER-IP fd00:10:96::a,tcp:80
rec ipset-test-no-set ipset test KUBE-LOAD-BALANCER 10.96.0.30,tcp:80
# a source range's entry is tested as written: the exact net, not a host or a smaller net in it
# (made after the listings above, which it would change)
ipset create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet hashsize 1024 maxelem 65536
ipset add KUBE-LOAD-BALANCER-SOURCE-CIDR 10.96.0.80,tcp:80,203.0.113.0/24
rec ipset-test-source-cidr ipset test KUBE-LOAD-BALANCER-SOURCE-CIDR 10.96.0.80,tcp:80,203.0.113.0/24
rec ipset-test-source-cidr-narrower ipset test KUBE-LOAD-BALANCER-SOURCE-CIDR 10.96.0.80,tcp:80,203.0.113.0/25
{
  echo "kernel $(uname -r)"
  ipvsadm --version
  ipset --version
} >"$out/versions.txt"
