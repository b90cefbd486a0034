// lab-kubelet: the kubelet stand-in of the lab cluster, one per node, run inside that node's
// network namespace. It registers the Node, runs its Pods as network namespaces with a small
// server on their container ports (kube-proxy's Pods as the real kube-proxy), reports their status
// from real readiness checks, and serves the kubelet's exec endpoint. No container runtime.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

type config struct {
	node        string
	ips         []string // InternalIPs, IPv4 first (dual-stack: then IPv6)
	podCIDRs    []string // one per family, in the same order
	netns       string   // the node's namespace, /run/netns/<prefix>.<node>: this process must be in it
	prefix      string   // every namespace this stand-in creates is named <prefix>.<...>
	dir         string   // the node's directory: Pod files, kube-proxy's configuration
	kubeconfig  string
	proxyConfig string // kubeconfig kube-proxy uses (system:kube-proxy)
	kubeProxy   string // the kube-proxy binary
	certFile    string // kubelet serving certificate and key, and the CA of its clients
	keyFile     string
	caFile      string
	hostInode   uint64 // the network namespace `up` ran in: never this one
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serveMain(os.Args[2:])
		return
	}
	var c config
	flag.StringVar(&c.node, "node", "", "node name")
	var ips, cidrs string
	flag.StringVar(&ips, "ip", "", "node InternalIPs, comma-separated, IPv4 first")
	flag.StringVar(&cidrs, "pod-cidr", "", "the node's Pod CIDRs, comma-separated, IPv4 first")
	flag.StringVar(&c.netns, "netns", "", "the node's network namespace (a file under /run/netns)")
	flag.StringVar(&c.prefix, "prefix", "", "name prefix of the lab's namespaces")
	flag.StringVar(&c.dir, "dir", "", "the node's working directory")
	flag.StringVar(&c.kubeconfig, "kubeconfig", "", "the node's kubeconfig (system:node:<node>)")
	flag.StringVar(&c.proxyConfig, "proxy-kubeconfig", "", "kube-proxy's kubeconfig")
	flag.StringVar(&c.kubeProxy, "kube-proxy", "", "the kube-proxy binary")
	flag.StringVar(&c.certFile, "tls-cert", "", "serving certificate")
	flag.StringVar(&c.keyFile, "tls-key", "", "serving key")
	flag.StringVar(&c.caFile, "client-ca", "", "CA of the clients (the API server)")
	flag.Uint64Var(&c.hostInode, "host-netns-inode", 0, "inode of the host's network namespace")
	flag.Parse()
	c.ips, c.podCIDRs = strings.Split(ips, ","), strings.Split(cidrs, ",")
	if err := run(c); err != nil {
		fmt.Fprintf(os.Stderr, "lab-kubelet %s: %v\n", c.node, err)
		os.Exit(1)
	}
}

func run(c config) error {
	if err := mustBeInLabNetns(c.netns, c.prefix, c.hostInode); err != nil {
		return err
	}
	rest, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	k := newKubelet(c, client)
	if err := k.registerNode(ctx); err != nil {
		return err
	}
	go k.serveKubeletAPI(ctx)
	go k.heartbeat(ctx)
	klog.Infof("node %s registered", c.node)
	k.runPods(ctx)
	k.shutdown()
	return nil
}
