// cilium-ref runs Cilium's own load-balancer control plane (github.com/cilium/cilium
// pkg/loadbalancer, assembled the way its script tests assemble it) on the Services,
// EndpointSlices and Pods of a kdebug snapshot, and prints what Cilium would program: the
// `frontends` and `backends` StateDB tables (as `db/show` prints them) and the BPF maps (as
// `lb/maps-dump` and `cilium-dbg bpf lb list` print them), optionally after breaking the maps. It is a reference for kdebug's Cilium mode, not part of kdebug.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cilium/cilium/pkg/node/addressing"
	nodeTypes "github.com/cilium/cilium/pkg/node/types"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

type options struct {
	objects, nodeName, nodeIP, algorithm, mode, mapsKind, out string
	nodeAddrs, labels, unhealthy, faults                      listFlag
	externalClusterIP, kpr, ipv4, ipv6, bpfIDs, verbose       bool
	ciliumFlags                                               []string
}

func main() {
	var o options
	flag.StringVar(&o.objects, "objects", "", "objects file: a kdebug snapshot's objects.json (a v1 List) or multi-document YAML")
	flag.StringVar(&o.nodeName, "node", "testnode", "local node name (ETP/ITP=Local, HostPort keep this node's endpoints)")
	flag.Var(&o.nodeAddrs, "node-address", "NodePort address(es) of the local node, IP[,IP6] (repeatable; default none: NodePorts stay 0.0.0.0 surrogates)")
	flag.StringVar(&o.nodeIP, "node-ip", "", "local node IP (proxy delegation); default the Node object's InternalIP")
	flag.Var(&o.labels, "node-label", "local node label k=v (repeatable; added to the Node object's labels)")
	flag.StringVar(&o.algorithm, "algorithm", "random", "--bpf-lb-algorithm: random|maglev")
	flag.StringVar(&o.mode, "mode", "snat", "--bpf-lb-mode: snat|dsr|hybrid")
	flag.BoolVar(&o.externalClusterIP, "external-clusterip", false, "--bpf-lb-external-clusterip")
	flag.BoolVar(&o.kpr, "kpr", true, "--kube-proxy-replacement (true also turns on socket LB)")
	flag.BoolVar(&o.ipv4, "ipv4", true, "--enable-ipv4")
	flag.BoolVar(&o.ipv6, "ipv6", false, "--enable-ipv6 (the agent's default is off; Cilium's test harness turns it on)")
	flag.StringVar(&o.mapsKind, "maps", "auto", "BPF maps: real (unpinned kernel maps, needs root), fake (Cilium's in-memory test maps), auto (real when root)")
	flag.Var(&o.unhealthy, "unhealthy", "ns/name=ADDR:PORT/PROTO: mark a backend unhealthy, as a health checker would (repeatable)")
	flag.Var(&o.faults, "fault", "after Cilium reconciled, break the BPF maps as a broken node's are (repeatable): slot=FRONTEND (its last backend slot deleted), backend=ADDR:PORT/PROTO (the backend entry deleted), dangling=FRONTEND (slot 1 at a backend ID that does not exist), frontend=FRONTEND (its service map entries deleted); FRONTEND as bpf lb list spells it, e.g. 10.96.0.10:53/UDP; faults.txt says what was done")
	flag.StringVar(&o.out, "out", "", "write frontends.txt, backends.txt, maps.txt, bpf-lb-list.txt (and faults.txt) into this directory instead of stdout")
	flag.BoolVar(&o.bpfIDs, "bpf-ids", false, "only list every BPF map and program on the system (for the leak check)")
	flag.BoolVar(&o.verbose, "v", false, "log the hive and the script to stderr")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: cilium-ref --objects FILE [options] [-- cilium agent flags...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	o.ciliumFlags = flag.Args() // anything after "--" goes to the agent's own flag set
	if o.bpfIDs {
		ids, err := bpfIDs()
		check(err)
		for _, id := range ids {
			fmt.Println(id)
		}
		return
	}
	if o.objects == "" {
		flag.Usage()
		os.Exit(2)
	}
	check(run(o))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cilium-ref:", err)
		os.Exit(1)
	}
}

// object is one Kubernetes object as read from the input, kept as JSON for `k8s/add`.
type object struct {
	kind, namespace, name string
	raw                   map[string]any
}

// readObjects reads a v1 List (JSON) or a YAML stream, flattening Lists, in input order.
func readObjects(path string) ([]object, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []object
	var add func(m map[string]any)
	add = func(m map[string]any) {
		kind, _ := m["kind"].(string)
		if items, ok := m["items"].([]any); ok && strings.HasSuffix(kind, "List") {
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					add(im)
				}
			}
			return
		}
		md, _ := m["metadata"].(map[string]any)
		ns, _ := md["namespace"].(string)
		name, _ := md["name"].(string)
		out = append(out, object{kind, ns, name, m})
	}
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if m != nil {
			add(m)
		}
	}
	return out, nil
}

// nodeFacts takes the local node's labels and addresses from its Node object, as Cilium's
// local-node sync would from the API server.
func nodeFacts(objs []object, name string) (labels map[string]string, ips []nodeTypes.Address) {
	labels = map[string]string{}
	for _, ob := range objs {
		if ob.kind != "Node" || ob.name != name {
			continue
		}
		md, _ := ob.raw["metadata"].(map[string]any)
		for k, v := range md["labels"].(map[string]any) {
			labels[k], _ = v.(string)
		}
		st, _ := ob.raw["status"].(map[string]any)
		addrs, _ := st["addresses"].([]any)
		for _, a := range addrs {
			am, _ := a.(map[string]any)
			t := map[string]addressing.AddressType{"InternalIP": addressing.NodeInternalIP, "ExternalIP": addressing.NodeExternalIP}[fmt.Sprint(am["type"])]
			if ip := net.ParseIP(fmt.Sprint(am["address"])); t != "" && ip != nil {
				ips = append(ips, nodeTypes.Address{Type: t, IP: ip})
			}
		}
	}
	return labels, ips
}

// hasHostPort says if a Pod asks for a hostPort (Cilium makes a HostPort service of it).
func hasHostPort(pod map[string]any) bool {
	spec, _ := pod["spec"].(map[string]any)
	for _, key := range []string{"initContainers", "containers"} {
		cs, _ := spec[key].([]any)
		for _, c := range cs {
			ports, _ := c.(map[string]any)["ports"].([]any)
			for _, p := range ports {
				if hp, _ := p.(map[string]any)["hostPort"].(float64); hp > 0 {
					return true
				}
			}
		}
	}
	return false
}

// healthCheckedLB says if Cilium's health server serves this Service on its LB address too:
// a LoadBalancer with an address, externalTrafficPolicy Local and a healthCheckNodePort.
func healthCheckedLB(svc map[string]any) bool {
	spec, _ := svc["spec"].(map[string]any)
	st, _ := svc["status"].(map[string]any)
	lbst, _ := st["loadBalancer"].(map[string]any)
	ingress, _ := lbst["ingress"].([]any)
	port, _ := spec["healthCheckNodePort"].(float64)
	return spec["type"] == "LoadBalancer" && spec["externalTrafficPolicy"] == "Local" && port > 0 && len(ingress) > 0
}

func flagOn(fs *pflag.FlagSet, name string) bool {
	v, err := fs.GetBool(name)
	return err == nil && v
}

// fed lists the kinds given to Cilium: its LB control plane watches Services and
// EndpointSlices, and local Pods for HostPort; everything else in a snapshot is ignored.
var fed = map[string]bool{"Service": true, "EndpointSlice": true, "Pod": true}

// bpfIDs lists every BPF map and program on the system as "map:ID(name)", "prog:ID(name)"
// (IDs are global, so this sees them whatever bpffs they are or are not pinned in).
func bpfIDs() ([]string, error) {
	var ids []string
	for id := ebpf.MapID(0); ; {
		next, err := ebpf.MapGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			break
		} else if err != nil {
			return nil, err
		}
		name := ""
		if m, err := ebpf.NewMapFromID(next); err == nil {
			if info, err := m.Info(); err == nil {
				name = info.Name
			}
			m.Close()
		}
		ids, id = append(ids, fmt.Sprintf("map:%d(%s)", next, name)), next
	}
	for id := ebpf.ProgramID(0); ; {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return ids, nil
		} else if err != nil {
			return nil, err
		}
		name := ""
		if p, err := ebpf.NewProgramFromID(next); err == nil {
			if info, err := p.Info(); err == nil {
				name = info.Name
			}
			p.Close()
		}
		ids, id = append(ids, fmt.Sprintf("prog:%d(%s)", next, name)), next
	}
}

// sandboxed says why this is not the private mount namespace with its own bpffs that run.sh
// sets up (it names the namespace it left in CILIUM_REF_OUTER_MNTNS): Cilium's code must not
// reach the host's /sys/fs/bpf.
func sandboxed() error {
	self, _ := os.Readlink("/proc/self/ns/mnt")
	outer := os.Getenv("CILIUM_REF_OUTER_MNTNS")
	if outer == "" || self == "" || self == outer {
		return errors.New("not in a mount namespace of its own")
	}
	var fs unix.Statfs_t
	if err := unix.Statfs("/sys/fs/bpf", &fs); err != nil || fs.Type != unix.BPF_FS_MAGIC {
		return errors.New("/sys/fs/bpf is not a bpffs")
	}
	return nil
}
