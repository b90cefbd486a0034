package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// serveMain is what a Pod's containers do, run inside its namespace: on each TCP port an HTTP
// server that answers with the Pod's name, on each UDP port an echo, or with --dns-kubeconfig the
// cluster DNS on UDP 53 (A and AAAA records of the Services' ClusterIPs, the lab's stand-in for CoreDNS).
func serveMain(args []string) {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	name := fs.String("name", "", "the Pod's name")
	tcp := fs.String("tcp", "", "TCP ports, comma-separated")
	udp := fs.String("udp", "", "UDP ports, comma-separated")
	dns := fs.String("dns-kubeconfig", "", "answer DNS on UDP 53 from the API's Services")
	_ = fs.Parse(args)
	for _, port := range split(*tcp) {
		go func() {
			h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, *name+"\n") })
			if err := http.ListenAndServe(":"+port, h); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}()
	}
	for _, port := range split(*udp) {
		conn, err := net.ListenPacket("udp", ":"+port)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			continue
		}
		if port == "53" && *dns != "" {
			go serveDNS(conn, newRecords(*dns))
		} else {
			go echo(conn)
		}
	}
	select {}
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func echo(conn net.PacketConn) {
	buf := make([]byte, 65535)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = conn.WriteTo(buf[:n], addr)
	}
}

// records are the Services' names and ClusterIPs (both families), read from the API at most
// once a second.
type records struct {
	mu     sync.Mutex
	client kubernetes.Interface
	at     time.Time
	byName map[string][]netip.Addr
}

func newRecords(kubeconfig string) *records {
	rest, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return &records{client: kubernetes.NewForConfigOrDie(rest)}
}

func (r *records) lookup(name string) ([]netip.Addr, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.at) > time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if list, err := r.client.CoreV1().Services("").List(ctx, metav1.ListOptions{}); err == nil {
			r.byName = map[string][]netip.Addr{}
			for _, s := range list.Items {
				name := fmt.Sprintf("%s.%s.svc.cluster.local.", s.Name, s.Namespace)
				for _, ip := range s.Spec.ClusterIPs {
					if a, err := netip.ParseAddr(ip); err == nil {
						r.byName[name] = append(r.byName[name], a)
					}
				}
			}
			r.at = time.Now()
		}
	}
	a, ok := r.byName[strings.ToLower(name)]
	return a, ok
}

func serveDNS(conn net.PacketConn, r *records) {
	buf := make([]byte, 512)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			return
		}
		var msg dnsmessage.Message
		if msg.Unpack(buf[:n]) != nil || len(msg.Questions) != 1 {
			continue
		}
		q := msg.Questions[0]
		msg.Header.Response, msg.Header.Authoritative, msg.Header.RecursionAvailable = true, true, true
		msg.Answers = nil
		addrs, ok := r.lookup(q.Name.String())
		if !ok {
			msg.Header.RCode = dnsmessage.RCodeNameError
		}
		// A for the IPv4 cluster IP, AAAA for the IPv6 one
		for _, a := range addrs {
			header := dnsmessage.ResourceHeader{Name: q.Name, Type: q.Type, Class: dnsmessage.ClassINET, TTL: 30}
			switch {
			case q.Type == dnsmessage.TypeA && a.Is4():
				msg.Answers = append(msg.Answers, dnsmessage.Resource{Header: header, Body: &dnsmessage.AResource{A: a.As4()}})
			case q.Type == dnsmessage.TypeAAAA && a.Is6():
				msg.Answers = append(msg.Answers, dnsmessage.Resource{Header: header, Body: &dnsmessage.AAAAResource{AAAA: a.As16()}})
			}
		}
		if out, err := msg.Pack(); err == nil {
			_, _ = conn.WriteTo(out, addr)
		}
	}
}
