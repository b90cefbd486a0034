// The port names `ipvsadm -l` (without -n) prints: getservbyport() reads the node's /etc/services.
// Taken from Debian's netbase 6.4 /etc/services (tcp, udp and sctp names and aliases), which most
// node images share, with RHEL's (IANA's) names for 6443 and 8080, sun-sr-https and webcache; a
// name only a node's own file has is not known here and its port stays unknown.
const NAMES = `
tcpmux:1 echo:7 discard:9 null:9 sink:9 systat:11 users:11 daytime:13
netstat:15 qotd:17 quote:17 chargen:19 source:19 ttytst:19 ftp-data:20 fsp:21
fspd:21 ftp:21 ssh:22 telnet:23 mail:25 smtp:25 time:37 timserver:37
nicname:43 whois:43 tacacs:49 domain:53 bootps:67 bootpc:68 tftp:69 gopher:70
finger:79 http:80 www:80 kerberos:88 kerberos-sec:88 kerberos5:88 krb5:88 iso-tsap:102
tsap:102 acr-nema:104 dicom:104 poppassd:106 pop-3:110 pop3:110 portmapper:111 sunrpc:111
auth:113 authentication:113 ident:113 tap:113 nntp:119 readnews:119 untp:119 ntp:123
epmap:135 loc-srv:135 netbios-ns:137 netbios-dgm:138 netbios-ssn:139 imap:143 imap2:143 snmp:161
snmp-trap:162 snmptrap:162 cmip-man:163 cmip-agent:164 mailq:174 xdmcp:177 bgp:179 smux:199
qmtp:209 wais:210 z3950:210 ipx:213 ptp-event:319 ptp-general:320 pawserv:345 zserv:346
rpc2portmap:369 codaauth2:370 Clearcase:371 clearcase:371 ldap:389 svrloc:427 https:443 snpp:444
microsoft-ds:445 kpasswd:464 smtps:465 ssmtp:465 submissions:465 urd:465 saft:487 isakmp:500
biff:512 comsat:512 exec:512 login:513 who:513 whod:513 cmd:514 shell:514
syslog:514 printer:515 spooler:515 talk:517 ntalk:518 route:520 routed:520 router:520
gdomap:538 uucp:540 uucpd:540 klogin:543 krcmd:544 kshell:544 dhcpv6-client:546 dhcpv6-server:547
afpovertcp:548 rtsp:554 nntps:563 snntp:563 submission:587 nqs:607 asf-rmcp:623 qmqp:628
ipp:631 ldaps:636 ldp:646 tinc:655 silc:706 kerberos-adm:749 kdc:750 kerberos-iv:750
kerberos4:750 kerberos-master:751 kerberos_master:751 passwd-server:752 passwd_server:752 hprop:754 krb-prop:754 krb5_prop:754
krb_prop:754 moira-db:775 moira_db:775 moira-update:777 moira_update:777 moira-ureg:779 moira_ureg:779 spamd:783
domain-s:853 supfilesrv:871 rsync:873 ftps-data:989 ftps:990 telnets:992 imaps:993 pop3s:995
socks:1080 proofd:1093 rootd:1094 rmiregistry:1099 supfiledbg:1127 skkserv:1178 openvpn:1194 predict:1210
rmtcfg:1236 xtel:1313 xtelw:1314 lotusnote:1352 lotusnotes:1352 ms-sql-s:1433 ms-sql-m:1434 ingreslock:1524
datametrics:1645 old-radius:1645 old-radacct:1646 sa-msg-port:1646 kermit:1649 groupwise:1677 l2f:1701 l2tp:1701
radius:1812 radacct:1813 radius-acct:1813 cisco-sccp:2000 nfs:2049 gnunet:2086 rtcm-sc104:2101 zephyr-srv:2102
zephyr-clt:2103 zephyr-hm:2104 gsigatekeeper:2119 iprop:2121 gris:2135 cvspserver:2401 venus:2430 venus-se:2431
codasrv:2432 codasrv-se:2433 mon:2583 zebrasrv:2600 zebra:2601 ripd:2602 ripngd:2603 ospfd:2604
bgpd:2605 ospf6d:2606 ospfapi:2607 isisd:2608 dict:2628 f5-globalsite:2792 gsiftp:2811 gpsd:2947
gds-db:3050 gds_db:3050 icp:3130 icpv2:3130 isns:3205 iscsi-target:3260 mysql:3306 ms-wbt-server:3389
nut:3493 distcc:3632 daap:3689 subversion:3690 svn:3690 suucp:4031 sysrqd:4094 sieve:4190
f5-iquery:4353 epmd:4369 remctl:4373 ntske:4460 ipsec-nat-t:4500 fax:4557 hylafax:4559 iax:4569
mtn:4691 radmin-port:4899 lrrd:4949 munin:4949 sip:5060 sip-tls:5061 jabber-client:5222 xmpp-client:5222
jabber-server:5269 xmpp-server:5269 cfengine:5308 mdns:5353 postgres:5432 postgresql:5432 rplay:5555 freeciv:5556
rptp:5556 nrpe:5666 nsca:5667 amqps:5671 amqp:5672 canna:5680 x11:6000 x11-0:6000
x11-1:6001 x11-2:6002 x11-3:6003 x11-4:6004 x11-5:6005 x11-6:6006 x11-7:6007 gnutella-svc:6346
gnutella-rtr:6347 redis:6379 sun-sr-https:6443 sge-qmaster:6444 sge_qmaster:6444 sge-execd:6445 sge_execd:6445 mysql-proxy:6446
syslog-tls:6514 sane:6566 sane-port:6566 saned:6566 ircd:6667 babel:6696 ircs-u:6697 afs3-fileserver:7000
bbs:7000 afs3-callback:7001 afs3-prserver:7002 afs3-vlserver:7003 afs3-kaserver:7004 afs3-volser:7005 afs3-bos:7007 afs3-update:7008
afs3-rmtsys:7009 font-service:7100 xfs:7100 zope-ftp:8021 http-alt:8080 webcache:8080 tproxy:8081 omniorb:8088
puppet:8140 clc-build-daemon:8990 xinetd:9098 bacula-dir:9101 bacula-fd:9102 bacula-sd:9103 git:9418 xmms2:9667
zope:9673 webmin:10000 zabbix-agent:10050 zabbix-trapper:10051 amanda:10080 kamanda:10081 amandaidx:10082 amidxtape:10083
nbd:10809 hkp:11371 sgi-cmsd:17001 sgi-crsd:17002 sgi-gcd:17003 sgi-cad:17004 db-lsp:17500 dcap:22125
gsidcap:22128 wnn6:22273 binkp:24554 asp:27374 csync2:30865 dircproxy:57000 tfido:60177 fido:60179
`;

/** "https" -> 443; undefined for a name not in netbase's list. */
export const SERVICE_PORTS: ReadonlyMap<string, number> = new Map(
  NAMES.split(/\s+/)
    .filter(Boolean)
    .map((pair) => {
      const [name, port] = pair.split(':');
      return [name!, Number(port)] as const;
    }),
);
