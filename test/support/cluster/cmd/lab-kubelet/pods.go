package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// labPod is a Pod as this node runs it: a network namespace (none with hostNetwork), the
// processes behind its containers, and the readiness last reported.
type labPod struct {
	mu          sync.Mutex
	pod         *corev1.Pod
	ips         []string // one per family, IPv4 first
	netns       string   // "" with hostNetwork: the node's own
	procs       []*exec.Cmd
	running     map[string]*exec.Cmd // containers with a process of their own (kube-proxy)
	terminating bool
	ready       map[string]bool
	restart     map[string]int32
	started     metav1.Time
	stop        context.CancelFunc
}

// runPods runs the Pods bound to this node until ctx ends.
func (k *kubelet) runPods(ctx context.Context) {
	lw := cache.NewListWatchFromClient(k.client.CoreV1().RESTClient(), "pods", metav1.NamespaceAll,
		fields.OneTermEqualSelector("spec.nodeName", k.c.node))
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { k.sync(ctx, o.(*corev1.Pod)) },
			UpdateFunc: func(_, o any) { k.sync(ctx, o.(*corev1.Pod)) },
			DeleteFunc: func(o any) {
				if p, ok := o.(*corev1.Pod); ok {
					k.forget(string(p.UID))
				}
			},
		},
	})
	ctrl.Run(ctx.Done())
}

func (k *kubelet) sync(ctx context.Context, pod *corev1.Pod) {
	uid := string(pod.UID)
	k.mu.Lock()
	p, known := k.pods[uid]
	k.mu.Unlock()
	if pod.DeletionTimestamp != nil {
		// a terminating Pod keeps running (and serving) for its grace period, as its endpoints do
		if known && !p.terminating {
			p.terminating = true
			grace := time.Duration(ptrOr(pod.DeletionGracePeriodSeconds, 0)) * time.Second
			time.AfterFunc(grace, func() { k.finish(ctx, pod) })
		} else if !known {
			k.finish(ctx, pod)
		}
		return
	}
	if known {
		p.mu.Lock()
		p.pod = pod
		p.mu.Unlock()
		return
	}
	p, err := k.start(ctx, pod)
	if err != nil {
		klog.Errorf("start %s/%s: %v", pod.Namespace, pod.Name, err)
		return
	}
	k.mu.Lock()
	k.pods[uid] = p
	k.mu.Unlock()
}

// finish stops a deleted Pod and removes it from the API, as the kubelet does once it is gone.
func (k *kubelet) finish(ctx context.Context, pod *corev1.Pod) {
	k.forget(string(pod.UID))
	grace := int64(0)
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && ctx.Err() == nil {
		klog.V(2).Infof("delete %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

func ptrOr[T any](v *T, def T) T {
	if v == nil {
		return def
	}
	return *v
}

func (k *kubelet) start(ctx context.Context, pod *corev1.Pod) (*labPod, error) {
	pctx, stop := context.WithCancel(ctx)
	p := &labPod{pod: pod, ready: map[string]bool{}, restart: map[string]int32{}, started: metav1.Now(), stop: stop}
	if pod.Spec.HostNetwork {
		p.ips = k.c.ips
	} else {
		ips, err := k.allocate()
		if err != nil {
			stop()
			return nil, err
		}
		p.ips = ips
		p.netns = fmt.Sprintf("%s.pod-%s", k.c.prefix, string(pod.UID)[:8])
		if err := k.plumb(p); err != nil {
			k.release(p)
			stop()
			return nil, err
		}
	}
	for _, c := range pod.Spec.Containers {
		if err := k.startContainer(pctx, p, c); err != nil {
			k.teardown(p)
			return nil, err
		}
	}
	go k.probeLoop(pctx, p)
	return p, nil
}

// allocate hands out the next free address of each of the node's Pod CIDRs (from .2 or ::2;
// the first is the bridge's).
func (k *kubelet) allocate() ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for _, cidr := range k.c.podCIDRs {
		prefix, err := netip.ParsePrefix(cidr)
		if err != nil {
			return nil, err
		}
		a := prefix.Addr().Next().Next()
		for prefix.Contains(a) && k.used[a.String()] {
			a = a.Next()
		}
		if !prefix.Contains(a) {
			return nil, fmt.Errorf("pod CIDR %s is full", cidr)
		}
		k.used[a.String()] = true
		out = append(out, a.String())
	}
	return out, nil
}

func (k *kubelet) release(p *labPod) {
	k.mu.Lock()
	for _, ip := range p.ips {
		delete(k.used, ip)
	}
	k.mu.Unlock()
}

// plumb gives the Pod its namespace: a veth to the node's cni0 bridge, its IP, a default route.
func (k *kubelet) plumb(p *labPod) error {
	host := "veth" + string(p.pod.UID)[:8]
	steps := [][]string{
		{"ip", "netns", "add", p.netns},
		{"ip", "-n", p.netns, "link", "set", "lo", "up"},
		{"ip", "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", p.netns},
		{"ip", "link", "set", host, "master", "cni0", "up"},
		{"ip", "-n", p.netns, "link", "set", "eth0", "up"},
	}
	for i, cidr := range k.c.podCIDRs {
		add := []string{"ip", "-n", p.netns, "addr", "add", p.ips[i] + "/" + strings.Split(cidr, "/")[1], "dev", "eth0"}
		if strings.Contains(cidr, ":") {
			add = append(add, "nodad") // usable at once, not after duplicate address detection
		}
		steps = append(steps, add, []string{"ip", "-n", p.netns, "route", "add", "default", "via", gateway(cidr)})
	}
	for _, s := range steps {
		if out, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(s, " "), err, out)
		}
	}
	return nil
}

func gateway(cidr string) string {
	return netip.MustParsePrefix(cidr).Addr().Next().String()
}

// startContainer runs what stands for a container: kube-proxy for kube-proxy's image, a server
// on the container ports otherwise (nothing for a container without ports: it just "runs").
func (k *kubelet) startContainer(ctx context.Context, p *labPod, c corev1.Container) error {
	if strings.Contains(c.Image, "kube-proxy") {
		k.setRunning(p, c.Name, nil)
		go k.runKubeProxy(ctx, p, c)
		return nil
	}
	var tcp, udp []string
	for _, port := range c.Ports {
		switch port.Protocol {
		case corev1.ProtocolUDP:
			udp = append(udp, fmt.Sprint(port.ContainerPort))
		case corev1.ProtocolSCTP: // no SCTP sockets here: the rules are what is tested
		default:
			tcp = append(tcp, fmt.Sprint(port.ContainerPort))
		}
	}
	if len(tcp)+len(udp) == 0 || p.netns == "" {
		return nil
	}
	self, _ := os.Executable()
	args := []string{"--net=" + nsPath(p.netns), self, "serve", "--name", p.pod.Name,
		"--tcp", strings.Join(tcp, ","), "--udp", strings.Join(udp, ",")}
	if p.pod.Labels["k8s-app"] == "kube-dns" {
		args = append(args, "--dns-kubeconfig", k.c.kubeconfig)
	}
	cmd := exec.Command("nsenter", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	log, err := os.Create(filepath.Join(k.c.dir, fmt.Sprintf("%s_%s_%s.log", p.pod.Namespace, p.pod.Name, c.Name)))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return err
	}
	p.mu.Lock()
	p.procs = append(p.procs, cmd)
	p.mu.Unlock()
	go func() { _ = cmd.Wait(); log.Close() }()
	return nil
}

func (k *kubelet) forget(uid string) {
	k.mu.Lock()
	p := k.pods[uid]
	delete(k.pods, uid)
	k.mu.Unlock()
	if p != nil {
		k.teardown(p)
	}
}

func (k *kubelet) teardown(p *labPod) {
	p.stop()
	p.mu.Lock()
	for _, cmd := range p.procs {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
	p.mu.Unlock()
	if p.netns != "" {
		_ = exec.Command("ip", "netns", "del", p.netns).Run()
		k.release(p)
	}
}

func (k *kubelet) shutdown() {
	k.mu.Lock()
	uids := make([]string, 0, len(k.pods))
	for uid := range k.pods {
		uids = append(uids, uid)
	}
	k.mu.Unlock()
	for _, uid := range uids {
		k.forget(uid)
	}
	time.Sleep(100 * time.Millisecond)
}
