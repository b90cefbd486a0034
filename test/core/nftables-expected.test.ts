// The nftables-mode table kdebug expects kube-proxy to write, checked three ways: for the objects
// of kube-proxy's own TestOverallNFTablesRules it is, line for line, the transaction that test
// expects (its expected text is the fact; its localhost NodePort lines belong to an alpha gate the
// test turns on, compared in test/versions/nftables-vectors.test.ts: here the gate is off, as by
// default); it loads with the real nft into an empty network
// namespace of its own; and read back from nft's listing it gives the Service trees its script
// gives. IP conventions (kube-proxy's proxier_test.go): Pod CIDR 10.0.0.0/8, Service CIDR
// 172.30.0.0/16, node test-node 192.168.0.2.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { expectedRules } from '../../src/core/dataplane/kube-proxy/expected.js';
import { clusterView, configFromConfigz, serviceCIDRs } from '../../src/core/kube/objects.js';
import { aKubeProxyConfig } from '../support/builders.js';
import { expectedNftScript } from '../../src/core/dataplane/nftables/expected/expected.js';
import { parseNftJson } from '../../src/core/dataplane/nftables/read/read-json.js';
import { parseNftScript } from '../../src/core/dataplane/nftables/read/read-script.js';
import { buildNftServiceTrees } from '../../src/core/dataplane/nftables/trees.js';
import { NODE, objects, objectsV6 } from '../support/nft-overall.js';
import type { KubeObject } from '../../src/core/model.js';
import { hasCommand, skipWithout } from '../support/skip.js';

/** kube-proxy's TestOverallNFTablesRules expected transaction (baseRules and the six Services). */
const KUBE_PROXY = `
add table ip kube-proxy { comment "rules for kube-proxy" ; }
add set ip kube-proxy cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }
add set ip kube-proxy nodeport-ips { type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }
add set ip kube-proxy hairpin-connections { type ipv4_addr . ipv4_addr . inet_proto . inet_service ; comment "service hairpin connections" ; }
add map ip kube-proxy firewall-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
add map ip kube-proxy no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
add map ip kube-proxy no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ip kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }
add chain ip kube-proxy cluster-ips-check
add chain ip kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
add chain ip kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }
add chain ip kube-proxy filter-forward { type filter hook forward priority 0 ; }
add chain ip kube-proxy filter-input { type filter hook input priority 0 ; }
add chain ip kube-proxy filter-output { type filter hook output priority 0 ; }
add chain ip kube-proxy firewall-check
add chain ip kube-proxy masquerading
add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip kube-proxy nodeport-endpoints-check
add chain ip kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
add chain ip kube-proxy services
add chain ip kube-proxy service-endpoints-check
add rule ip kube-proxy cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule ip kube-proxy cluster-ips-check ip daddr { 172.30.0.0/16 } drop comment "Drop traffic to unallocated ClusterIPs"
add rule ip kube-proxy filter-prerouting-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-forward ct state new jump service-endpoints-check
add rule ip kube-proxy filter-forward ct state new jump cluster-ips-check
add rule ip kube-proxy filter-input ct state new jump nodeport-endpoints-check
add rule ip kube-proxy filter-input ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output ct state new jump service-endpoints-check
add rule ip kube-proxy filter-output-pre-dnat ct state new jump firewall-check
add rule ip kube-proxy filter-output ct state new jump cluster-ips-check
add rule ip kube-proxy firewall-check ip daddr . meta l4proto . th dport vmap @firewall-ips
add rule ip kube-proxy masquerading mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random
add rule ip kube-proxy masquerading ct status dnat ip saddr . ip daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
add rule ip kube-proxy nat-output jump services
add rule ip kube-proxy nat-postrouting jump masquerading
add rule ip kube-proxy nat-prerouting jump services
add rule ip kube-proxy nodeport-endpoints-check ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
add rule ip kube-proxy reject-chain reject
add rule ip kube-proxy services ip daddr @cluster-ips ip saddr != 10.0.0.0/8 mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"
add rule ip kube-proxy services ip daddr . meta l4proto . th dport vmap @service-ips
add rule ip kube-proxy services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
add element ip kube-proxy nodeport-ips { 192.168.0.2 }
add rule ip kube-proxy service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services
add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80
add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 meta l4proto tcp dnat to 10.180.0.1:80
add element ip kube-proxy cluster-ips { 172.30.0.41 }
add element ip kube-proxy service-ips { 172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }
add element ip kube-proxy hairpin-connections { 10.180.0.1 . 10.180.0.1 . tcp . 80 }
add chain ip kube-proxy service-42NFTM6N-ns2/svc2/tcp/p80
add rule ip kube-proxy service-42NFTM6N-ns2/svc2/tcp/p80 meta l4proto tcp dnat to 10.180.0.2:80
add chain ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80
add rule ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 ip saddr 10.0.0.0/8 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"
add rule ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local mark set mark or 0x4000 comment "masquerade local traffic"
add rule ip kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit local traffic"
add element ip kube-proxy cluster-ips { 172.30.0.42 }
add element ip kube-proxy service-ips { 172.30.0.42 . tcp . 80 : goto service-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip kube-proxy service-ips { 192.168.99.22 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip kube-proxy service-ips { 1.2.3.4 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip kube-proxy service-nodeports { tcp . 3001 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip kube-proxy no-endpoint-nodeports { tcp . 3001 comment "ns2/svc2:p80" : drop }
add element ip kube-proxy no-endpoint-services { 1.2.3.4 . tcp . 80 comment "ns2/svc2:p80" : drop }
add element ip kube-proxy no-endpoint-services { 192.168.99.22 . tcp . 80 comment "ns2/svc2:p80" : drop }
add chain ip kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80
add rule ip kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80 meta l4proto tcp dnat to 10.180.0.3:80
add chain ip kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80
add rule ip kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80 mark set mark or 0x4000 comment "masquerade"
add rule ip kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80 goto service-4AT6LBPK-ns3/svc3/tcp/p80
add element ip kube-proxy cluster-ips { 172.30.0.43 }
add element ip kube-proxy service-ips { 172.30.0.43 . tcp . 80 : goto service-4AT6LBPK-ns3/svc3/tcp/p80 }
add element ip kube-proxy service-nodeports { tcp . 3003 : goto external-4AT6LBPK-ns3/svc3/tcp/p80 }
add element ip kube-proxy hairpin-connections { 10.180.0.3 . 10.180.0.3 . tcp . 80 }
add chain ip kube-proxy service-LAUZTJTB-ns4/svc4/tcp/p80
add rule ip kube-proxy service-LAUZTJTB-ns4/svc4/tcp/p80 meta l4proto tcp dnat ip addr . port to numgen random mod 2 map { 0 : 10.180.0.4 . 80 , 1 : 10.180.0.5 . 80 }
add chain ip kube-proxy external-LAUZTJTB-ns4/svc4/tcp/p80
add rule ip kube-proxy external-LAUZTJTB-ns4/svc4/tcp/p80 mark set mark or 0x4000 comment "masquerade"
add rule ip kube-proxy external-LAUZTJTB-ns4/svc4/tcp/p80 goto service-LAUZTJTB-ns4/svc4/tcp/p80
add element ip kube-proxy cluster-ips { 172.30.0.44 }
add element ip kube-proxy service-ips { 172.30.0.44 . tcp . 80 : goto service-LAUZTJTB-ns4/svc4/tcp/p80 }
add element ip kube-proxy service-ips { 192.168.99.33 . tcp . 80 : goto external-LAUZTJTB-ns4/svc4/tcp/p80 }
add element ip kube-proxy hairpin-connections { 10.180.0.5 . 10.180.0.5 . tcp . 80 }
add set ip kube-proxy affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }
add chain ip kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80
add rule ip kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80 ip saddr @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80
add rule ip kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 }
add chain ip kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80
add rule ip kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80 mark set mark or 0x4000 comment "masquerade"
add rule ip kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80 goto service-HVFWP5L3-ns5/svc5/tcp/p80
add chain ip kube-proxy endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80
add rule ip kube-proxy endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 update @affinity-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 { ip saddr }
add rule ip kube-proxy endpoint-GTK6MW7G-ns5/svc5/tcp/p80__10.180.0.3/80 meta l4proto tcp dnat to 10.180.0.3:80
add chain ip kube-proxy firewall-HVFWP5L3-ns5/svc5/tcp/p80
add rule ip kube-proxy firewall-HVFWP5L3-ns5/svc5/tcp/p80 ip saddr != { 203.0.113.0/25 } drop
add element ip kube-proxy cluster-ips { 172.30.0.45 }
add element ip kube-proxy service-ips { 172.30.0.45 . tcp . 80 : goto service-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip kube-proxy service-ips { 5.6.7.8 . tcp . 80 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip kube-proxy service-nodeports { tcp . 3002 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip kube-proxy firewall-ips { 5.6.7.8 . tcp . 80 : goto firewall-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip kube-proxy cluster-ips { 172.30.0.46 }
add element ip kube-proxy no-endpoint-services { 172.30.0.46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }
`;

/** kube-proxy's TestOverallNFTablesRulesIPv6 expected transaction, the same six Services. */
const KUBE_PROXY_V6 = `
add table ip6 kube-proxy { comment "rules for kube-proxy" ; }
add set ip6 kube-proxy cluster-ips { type ipv6_addr ; comment "Active ClusterIPs" ; }
add set ip6 kube-proxy nodeport-ips { type ipv6_addr ; comment "IPs that accept NodePort traffic" ; }
add set ip6 kube-proxy hairpin-connections { type ipv6_addr . ipv6_addr . inet_proto . inet_service ; comment "service hairpin connections" ; }
add map ip6 kube-proxy firewall-ips { type ipv6_addr . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }
add map ip6 kube-proxy no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }
add map ip6 kube-proxy no-endpoint-services { type ipv6_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }
add map ip6 kube-proxy service-ips { type ipv6_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }
add map ip6 kube-proxy service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }
add chain ip6 kube-proxy cluster-ips-check
add chain ip6 kube-proxy filter-prerouting-pre-dnat { type filter hook prerouting priority -110 ; }
add chain ip6 kube-proxy filter-output-pre-dnat { type filter hook output priority -110 ; }
add chain ip6 kube-proxy filter-forward { type filter hook forward priority 0 ; }
add chain ip6 kube-proxy filter-input { type filter hook input priority 0 ; }
add chain ip6 kube-proxy filter-output { type filter hook output priority 0 ; }
add chain ip6 kube-proxy firewall-check
add chain ip6 kube-proxy masquerading
add chain ip6 kube-proxy nat-output { type nat hook output priority -100 ; }
add chain ip6 kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }
add chain ip6 kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }
add chain ip6 kube-proxy nodeport-endpoints-check
add chain ip6 kube-proxy reject-chain { comment "helper for @no-endpoint-services / @no-endpoint-nodeports" ; }
add chain ip6 kube-proxy services
add chain ip6 kube-proxy service-endpoints-check
add rule ip6 kube-proxy cluster-ips-check ip6 daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"
add rule ip6 kube-proxy cluster-ips-check ip6 daddr { fd00:10:96::/112 } drop comment "Drop traffic to unallocated ClusterIPs"
add rule ip6 kube-proxy filter-prerouting-pre-dnat ct state new jump firewall-check
add rule ip6 kube-proxy filter-forward ct state new jump service-endpoints-check
add rule ip6 kube-proxy filter-forward ct state new jump cluster-ips-check
add rule ip6 kube-proxy filter-input ct state new jump nodeport-endpoints-check
add rule ip6 kube-proxy filter-input ct state new jump service-endpoints-check
add rule ip6 kube-proxy filter-output ct state new jump service-endpoints-check
add rule ip6 kube-proxy filter-output-pre-dnat ct state new jump firewall-check
add rule ip6 kube-proxy filter-output ct state new jump cluster-ips-check
add rule ip6 kube-proxy firewall-check ip6 daddr . meta l4proto . th dport vmap @firewall-ips
add rule ip6 kube-proxy masquerading mark and 0x4000 != 0 mark set mark xor 0x4000 masquerade fully-random
add rule ip6 kube-proxy masquerading ct status dnat ip6 saddr . ip6 daddr . meta l4proto . th dport @hairpin-connections masquerade fully-random
add rule ip6 kube-proxy nat-output jump services
add rule ip6 kube-proxy nat-postrouting jump masquerading
add rule ip6 kube-proxy nat-prerouting jump services
add rule ip6 kube-proxy nodeport-endpoints-check ip6 daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports
add rule ip6 kube-proxy reject-chain reject
add rule ip6 kube-proxy services ip6 daddr @cluster-ips ip6 saddr != fd00:10::/64 mark set mark or 0x4000 comment "masquerade clusterIP traffic from outside cluster"
add rule ip6 kube-proxy services ip6 daddr . meta l4proto . th dport vmap @service-ips
add rule ip6 kube-proxy services ip6 daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports
add element ip6 kube-proxy nodeport-ips { 2001:db8::1 }
add rule ip6 kube-proxy service-endpoints-check ip6 daddr . meta l4proto . th dport vmap @no-endpoint-services
add chain ip6 kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80
add rule ip6 kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 meta l4proto tcp dnat to [fd00:10:180::1]:80
add element ip6 kube-proxy cluster-ips { fd00:172:30::41 }
add element ip6 kube-proxy service-ips { fd00:172:30::41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80 }
add element ip6 kube-proxy hairpin-connections { fd00:10:180::1 . fd00:10:180::1 . tcp . 80 }
add chain ip6 kube-proxy service-42NFTM6N-ns2/svc2/tcp/p80
add rule ip6 kube-proxy service-42NFTM6N-ns2/svc2/tcp/p80 meta l4proto tcp dnat to [fd00:10:180::2]:80
add chain ip6 kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80
add rule ip6 kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 ip6 saddr fd00:10::/64 goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit pod traffic"
add rule ip6 kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local mark set mark or 0x4000 comment "masquerade local traffic"
add rule ip6 kube-proxy external-42NFTM6N-ns2/svc2/tcp/p80 fib saddr type local goto service-42NFTM6N-ns2/svc2/tcp/p80 comment "short-circuit local traffic"
add element ip6 kube-proxy cluster-ips { fd00:172:30::42 }
add element ip6 kube-proxy service-ips { fd00:172:30::42 . tcp . 80 : goto service-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip6 kube-proxy service-ips { 2001:db8:99::22 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip6 kube-proxy service-ips { 5555::1 . tcp . 80 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip6 kube-proxy service-nodeports { tcp . 3001 : goto external-42NFTM6N-ns2/svc2/tcp/p80 }
add element ip6 kube-proxy no-endpoint-nodeports { tcp . 3001 comment "ns2/svc2:p80" : drop }
add element ip6 kube-proxy no-endpoint-services { 5555::1 . tcp . 80 comment "ns2/svc2:p80" : drop }
add element ip6 kube-proxy no-endpoint-services { 2001:db8:99::22 . tcp . 80 comment "ns2/svc2:p80" : drop }
add chain ip6 kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80
add rule ip6 kube-proxy service-4AT6LBPK-ns3/svc3/tcp/p80 meta l4proto tcp dnat to [fd00:10:180::3]:80
add chain ip6 kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80
add rule ip6 kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80 mark set mark or 0x4000 comment "masquerade"
add rule ip6 kube-proxy external-4AT6LBPK-ns3/svc3/tcp/p80 goto service-4AT6LBPK-ns3/svc3/tcp/p80
add element ip6 kube-proxy cluster-ips { fd00:172:30::43 }
add element ip6 kube-proxy service-ips { fd00:172:30::43 . tcp . 80 : goto service-4AT6LBPK-ns3/svc3/tcp/p80 }
add element ip6 kube-proxy service-nodeports { tcp . 3003 : goto external-4AT6LBPK-ns3/svc3/tcp/p80 }
add element ip6 kube-proxy hairpin-connections { fd00:10:180::3 . fd00:10:180::3 . tcp . 80 }
add chain ip6 kube-proxy service-LAUZTJTB-ns4/svc4/tcp/p80
add rule ip6 kube-proxy service-LAUZTJTB-ns4/svc4/tcp/p80 meta l4proto tcp dnat ip6 addr . port to numgen random mod 2 map { 0 : fd00:10:180::4 . 80 , 1 : fd00:10:180::5 . 80 }
add chain ip6 kube-proxy external-LAUZTJTB-ns4/svc4/tcp/p80
add rule ip6 kube-proxy external-LAUZTJTB-ns4/svc4/tcp/p80 mark set mark or 0x4000 comment "masquerade"
add rule ip6 kube-proxy external-LAUZTJTB-ns4/svc4/tcp/p80 goto service-LAUZTJTB-ns4/svc4/tcp/p80
add element ip6 kube-proxy cluster-ips { fd00:172:30::44 }
add element ip6 kube-proxy service-ips { fd00:172:30::44 . tcp . 80 : goto service-LAUZTJTB-ns4/svc4/tcp/p80 }
add element ip6 kube-proxy service-ips { 2001:db8:99::33 . tcp . 80 : goto external-LAUZTJTB-ns4/svc4/tcp/p80 }
add element ip6 kube-proxy hairpin-connections { fd00:10:180::5 . fd00:10:180::5 . tcp . 80 }
add set ip6 kube-proxy affinity-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80 { type ipv6_addr ; flags dynamic,timeout ; timeout 10800s ; }
add chain ip6 kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80
add rule ip6 kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80 ip6 saddr @affinity-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80 goto endpoint-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80
add rule ip6 kube-proxy service-HVFWP5L3-ns5/svc5/tcp/p80 numgen random mod 1 vmap { 0 : goto endpoint-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80 }
add chain ip6 kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80
add rule ip6 kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80 mark set mark or 0x4000 comment "masquerade"
add rule ip6 kube-proxy external-HVFWP5L3-ns5/svc5/tcp/p80 goto service-HVFWP5L3-ns5/svc5/tcp/p80
add chain ip6 kube-proxy endpoint-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80
add rule ip6 kube-proxy endpoint-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80 update @affinity-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80 { ip6 saddr }
add rule ip6 kube-proxy endpoint-5HFFSBBM-ns5/svc5/tcp/p80__fd00.10.180..3/80 meta l4proto tcp dnat to [fd00:10:180::3]:80
add chain ip6 kube-proxy firewall-HVFWP5L3-ns5/svc5/tcp/p80
add rule ip6 kube-proxy firewall-HVFWP5L3-ns5/svc5/tcp/p80 ip6 saddr != { 2001:db8:203::/64 } drop
add element ip6 kube-proxy cluster-ips { fd00:172:30::45 }
add element ip6 kube-proxy service-ips { fd00:172:30::45 . tcp . 80 : goto service-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip6 kube-proxy service-ips { 5555::2 . tcp . 80 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip6 kube-proxy service-nodeports { tcp . 3002 : goto external-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip6 kube-proxy firewall-ips { 5555::2 . tcp . 80 : goto firewall-HVFWP5L3-ns5/svc5/tcp/p80 }
add element ip6 kube-proxy cluster-ips { fd00:172:30::46 }
add element ip6 kube-proxy no-endpoint-services { fd00:172:30::46 . tcp . 80 comment "ns6/svc6:p80" : goto reject-chain }
`;

/** The objects with kube-proxy's configuration as by default: no feature gate set. */
const gateOff = (objs: KubeObject[]) =>
  objs.map((o) =>
    o.kind === 'ConfigMap'
      ? {
          ...o,
          data: {
            'config.conf': String((o['data'] as Record<string, string>)['config.conf']).replace(
              /featureGates:\n.*\n/,
              '',
            ),
          },
        }
      : o,
  );
const view = () => clusterView(gateOff(objects));
const script = () => {
  const v = view();
  return expectedNftScript(expectedRules(v, NODE), serviceCIDRs(v));
};

describe('the nftables table kube-proxy should write', () => {
  it("is kube-proxy's own expected transaction for the objects of its TestOverallNFTablesRules", () => {
    const theirs = KUBE_PROXY.trim().split('\n');
    assert.deepEqual([...script()].sort(), [...theirs].sort());
  });

  it("is kube-proxy's own IPv6 transaction for the objects of its TestOverallNFTablesRulesIPv6", () => {
    const v = clusterView(gateOff(objectsV6));
    const ours = expectedNftScript(expectedRules(v, NODE, { family: 'IPv6' }), serviceCIDRs(v));
    assert.deepEqual([...ours].sort(), KUBE_PROXY_V6.trim().split('\n').sort());
  });

  it('marks each IPv6 endpoint its hairpin-connections set holds as masqueraded, as the IPv4 ones', () => {
    const v6 = buildNftServiceTrees(parseNftScript(KUBE_PROXY_V6).table('ip6', 'kube-proxy')!);
    const local = KUBE_PROXY_V6.split('\n').filter((l) =>
      l.startsWith('add element ip6 kube-proxy hairpin-connections'),
    );
    assert.ok(local.length > 0);
    const marked = v6.services.flatMap((t) =>
      [...t.endpoints, ...(t.localEndpoints ?? [])].filter((e) => e.hairpinMasquerade === true),
    );
    assert.equal(new Set(marked.map((e) => e.address)).size, local.length);
    assert.ok(marked.every((e) => e.address?.startsWith('[')));
  });

  it('adds every chain before a rule or element points at it', () => {
    const made = new Set<string>();
    for (const line of script()) {
      const chain = /^add chain ip kube-proxy (\S+)/.exec(line);
      if (chain) made.add(chain[1]!);
      for (const [, to] of line.matchAll(/(?:goto|jump) (\S+?)(?= |,|$)/g))
        assert.ok(made.has(to!), `${line}: ${to} not yet added`);
    }
  });

  it('reads back, through kdebug rules, into the Service trees the objects say', () => {
    const trees = buildNftServiceTrees(
      parseNftScript(script().join('\n')).table('ip', 'kube-proxy')!,
    );
    const shares = Object.fromEntries(
      trees.services.map((t) => [
        t.name,
        t.endpoints.map((e) => `${e.address}@${e.probability}`).join(' '),
      ]),
    );
    assert.deepEqual(shares, {
      'ns1/svc1:p80': '10.180.0.1:80@1',
      'ns2/svc2:p80': '10.180.0.2:80@1',
      'ns3/svc3:p80': '10.180.0.3:80@1',
      'ns4/svc4:p80': '10.180.0.4:80@0.5 10.180.0.5:80@0.5',
      'ns5/svc5:p80': '10.180.0.3:80@1',
      'ns6/svc6:p80': '',
    });
    assert.equal(trees.orphans.length, 0);
  });

  it('without ServiceCIDR objects has no drop for unallocated cluster IPs', () => {
    const v = clusterView(objects.filter((o) => o.kind !== 'ServiceCIDR'));
    const lines = expectedNftScript(expectedRules(v, NODE), serviceCIDRs(v));
    assert.ok(!lines.some((l) => l.includes('unallocated')));
    assert.ok(lines.some((l) => l.includes('Reject traffic to invalid ports')));
  });
});

const why =
  hasCommand('nft') && hasCommand('unshare') ? '' : 'nft and unshare (nftables, util-linux)';
describe('the expected nftables table against the real nft', skipWithout(why), () => {
  /** Loads `text` with nft -f in a network namespace of its own and lists it back as JSON. */
  const loadAndList = (text: string) => {
    const r = spawnSync(
      'unshare',
      ['-n', 'sh', '-c', 'nft -f - && nft -j list table ip kube-proxy'],
      { input: text, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };

  it('loads with nft -f into an empty namespace, and its listing reads into the same trees', () => {
    const text = script().join('\n') + '\n';
    const listed = buildNftServiceTrees(parseNftJson(loadAndList(text)).table('ip', 'kube-proxy')!);
    const own = buildNftServiceTrees(parseNftScript(text).table('ip', 'kube-proxy')!);
    const brief = (t: typeof own) =>
      t.services.map((s) => ({
        name: s.name,
        entries: s.entries.map((e) => `${e.kind} ${e.address ?? ''}:${e.port}`).sort(),
        endpoints: s.endpoints.map((e) => `${e.address}@${e.probability}`),
        local: (s.localEndpoints ?? []).map((e) => e.address),
        verdicts: s.verdicts.map((v) => `${v.kind} ${v.address ?? ''}:${v.port}`).sort(),
        chains: s.chains,
        affinity: s.affinitySeconds,
      }));
    assert.deepEqual(brief(listed), brief(own));
  });
});

describe("kube-proxy 1.37's localhost node-port rejects (the KubeProxyNFTablesLocalhostNodePorts gate)", () => {
  const GATE = 'KubeProxyNFTablesLocalhostNodePorts';
  const lines = (objs: KubeObject[], minor = 37) => {
    const v = clusterView(objs);
    return expectedNftScript(expectedRules(v, NODE, { release: { minor } }), serviceCIDRs(v));
  };
  const withConfig = (conf: string) =>
    objects.map((o) => (o.kind === 'ConfigMap' ? aKubeProxyConfig(conf) : o));
  const rejects = (script: string[]) =>
    script
      .filter((l) => l.startsWith('add chain ip kube-proxy localhost-nodeport-reject-'))
      .map((l) => l.split('-').pop());
  const pod = (args: string[]): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'kube-proxy-x',
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-proxy' },
    },
    spec: {
      nodeName: NODE,
      containers: [{ name: 'kube-proxy', command: ['/usr/local/bin/kube-proxy', ...args] }],
    },
    status: { phase: 'Running' },
  });

  it('writes none with the gate off, as by default, nor before 1.37', () => {
    assert.deepEqual(rejects(lines(withConfig('mode: nftables\nclusterCIDR: 10.0.0.0/8\n'))), []);
    const on = withConfig(
      `mode: nftables\nclusterCIDR: 10.0.0.0/8\nfeatureGates:\n  ${GATE}: true\n`,
    );
    assert.deepEqual(rejects(lines(on, 36)), []);
    assert.deepEqual(rejects(lines(on)), ['tcp', 'udp', 'sctp']);
  });

  it('leaves TCP to the userspace proxy where nodePortAddresses names loopback itself', () => {
    const conf = `mode: nftables\nclusterCIDR: 10.0.0.0/8\nnodePortAddresses: [127.0.0.0/8, 192.168.0.0/16]\nfeatureGates:\n  ${GATE}: true\n`;
    const script = lines(withConfig(conf));
    assert.deepEqual(rejects(script), ['udp', 'sctp']);
    assert.ok(!script.some((l) => /localhost-nodeport-reject-ports \{ tcp \./.test(l)));
    // a catch-all CIDR holds loopback but does not name it: every protocol is rejected
    const all = `mode: nftables\nclusterCIDR: 10.0.0.0/8\nnodePortAddresses: [0.0.0.0/0]\nfeatureGates:\n  ${GATE}: true\n`;
    assert.deepEqual(rejects(lines(withConfig(all))), ['tcp', 'udp', 'sctp']);
  });

  it("takes the gate from kube-proxy's --feature-gates over its file", () => {
    const base = withConfig(
      `mode: nftables\nclusterCIDR: 10.0.0.0/8\nfeatureGates:\n  ${GATE}: true\n`,
    );
    assert.deepEqual(rejects(lines([...base, pod([`--feature-gates=${GATE}=false`])])), []);
    const off = withConfig('mode: nftables\nclusterCIDR: 10.0.0.0/8\n');
    assert.deepEqual(rejects(lines([...off, pod(['--feature-gates', `A=true,${GATE}=true`])])), [
      'tcp',
      'udp',
      'sctp',
    ]);
  });

  it('reads the gate from /configz, as kube-proxy serves it (Go field names before 1.36)', () => {
    const doc = (c: object) => JSON.stringify({ 'kubeproxy.config.k8s.io': c });
    assert.deepEqual(
      configFromConfigz(doc({ mode: 'nftables', featureGates: { [GATE]: true } }), NODE)
        ?.featureGates,
      { [GATE]: true },
    );
    assert.deepEqual(
      configFromConfigz(doc({ Mode: 'nftables', FeatureGates: { [GATE]: false } }), NODE)
        ?.featureGates,
      { [GATE]: false },
    );
  });
});
