package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
	utilexec "k8s.io/utils/exec"
)

// serveKubeletAPI serves what the API server asks of a kubelet here: exec (kubectl exec, and
// kdebug's --via kube-proxy and debug Pods), over TLS with client certificates of the lab's CA.
func (k *kubelet) serveKubeletAPI(ctx context.Context) {
	ca, err := os.ReadFile(k.c.caFile)
	if err != nil {
		klog.Fatalf("client CA: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", k.serveExec)
	srv := &http.Server{
		Addr:      net.JoinHostPort(k.c.ips[0], strconv.Itoa(kubeletPort)),
		Handler:   mux,
		TLSConfig: &tls.Config{ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12},
	}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.ListenAndServeTLS(k.c.certFile, k.c.keyFile); err != nil && !errors.Is(err, http.ErrServerClosed) {
		klog.Fatalf("kubelet API: %v", err)
	}
}

func (k *kubelet) serveExec(w http.ResponseWriter, r *http.Request) {
	p := k.find(r.PathValue("namespace"), r.PathValue("pod"))
	if p == nil {
		http.Error(w, "pod not found", http.StatusNotFound)
		return
	}
	opts, err := remotecommand.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cmd := r.URL.Query()["command"]
	remotecommand.ServeExec(w, r, &executor{k: k, p: p}, p.pod.Name, string(p.pod.UID),
		r.PathValue("container"), cmd, opts, 5*time.Minute, 30*time.Second,
		remotecommand.SupportedStreamingProtocols)
}

func (k *kubelet) find(namespace, name string) *labPod {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.pods {
		if p.pod.Namespace == namespace && p.pod.Name == name {
			return p
		}
	}
	return nil
}

type executor struct {
	k *kubelet
	p *labPod
}

// ExecInContainer runs the command in the Pod's network namespace. The container's files are
// the node's: a hostPath "/" volume's mount point is the root, so `chroot /host` is dropped.
func (e *executor) ExecInContainer(ctx context.Context, _, _, container string, argv []string,
	in io.Reader, out, errw io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize, _ time.Duration) error {
	argv = withoutHostChroot(e.p.pod, container, argv)
	if len(argv) == 0 {
		return fmt.Errorf("empty command")
	}
	cmd := e.k.command(e.p, argv)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, errw
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return utilexec.CodeExitError{Err: err, Code: exit.ExitCode()}
	}
	var notFound *exec.Error
	if errors.As(err, &notFound) {
		return utilexec.CodeExitError{Err: err, Code: 127}
	}
	return err
}

// withoutHostChroot drops "chroot <dir>" where <dir> is where the container mounts the node's "/".
func withoutHostChroot(pod *corev1.Pod, container string, argv []string) []string {
	roots := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath == nil || v.HostPath.Path != "/" {
			continue
		}
		for _, c := range pod.Spec.Containers {
			for _, m := range c.VolumeMounts {
				if c.Name == container && m.Name == v.Name {
					roots[strings.TrimSuffix(m.MountPath, "/")] = true
				}
			}
		}
	}
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "chroot" && roots[strings.TrimSuffix(argv[i+1], "/")] {
			return append(append([]string{}, argv[:i]...), argv[i+2:]...)
		}
	}
	return argv
}
