package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

// runKubeProxy runs the real kube-proxy for kube-proxy's container, in this node's namespace
// (checked when this process started), with the configuration of the ConfigMap the Pod mounts;
// it is restarted when it exits, and its container shows as crash-looping meanwhile.
func (k *kubelet) runKubeProxy(ctx context.Context, p *labPod, c corev1.Container) {
	// the Node authorizer lets a node read a Pod's ConfigMap only once it has seen the Pod bound
	// there: retry, as the kubelet retries a volume mount
	conf, err := k.kubeProxyConfig(ctx, p.pod)
	for try := 0; err != nil && try < 60 && ctx.Err() == nil; try++ {
		klog.V(2).Infof("kube-proxy on %s: %v (retrying)", k.c.node, err)
		time.Sleep(time.Second)
		conf, err = k.kubeProxyConfig(ctx, p.pod)
	}
	if err != nil {
		klog.Errorf("kube-proxy on %s: %v", k.c.node, err)
		return
	}
	log, err := os.OpenFile(filepath.Join(k.c.dir, "kube-proxy.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		klog.Errorf("kube-proxy log: %v", err)
		return
	}
	defer log.Close()
	// a test stops kube-proxy on this node by creating this file, and lets it start again by removing it
	stopped := filepath.Join(k.c.dir, "kube-proxy.stopped")
	for ctx.Err() == nil {
		if exists(stopped) {
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		cmd := exec.CommandContext(ctx, k.c.kubeProxy, "--config="+conf, "--hostname-override="+k.c.node)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			klog.Errorf("kube-proxy: %v", err)
			return
		}
		k.setRunning(p, c.Name, cmd)
		done := make(chan struct{})
		go func() {
			for {
				select {
				case <-done:
					return
				case <-time.After(500 * time.Millisecond):
					if exists(stopped) {
						_ = cmd.Process.Kill()
					}
				}
			}
		}()
		_ = cmd.Wait()
		close(done)
		k.setRunning(p, c.Name, nil)
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		p.restart[c.Name]++
		p.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// setRunning records the process behind a container (nil: it is not running).
func (k *kubelet) setRunning(p *labPod, container string, cmd *exec.Cmd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running == nil {
		p.running = map[string]*exec.Cmd{}
	}
	p.running[container] = cmd
	if cmd != nil {
		p.procs = append(p.procs, cmd)
	}
}

// containerRunning: a container without a process of its own (a server, or nothing) runs as
// long as its Pod does; kube-proxy's runs while its process does.
func (k *kubelet) containerRunning(p *labPod, container string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd, tracked := p.running[container]
	return !tracked || cmd != nil
}

// kubeProxyConfig writes the Pod's ConfigMap file (config.conf) for this node, pointing kube-proxy
// at the lab's kube-proxy credentials instead of a service account token.
func (k *kubelet) kubeProxyConfig(ctx context.Context, pod *corev1.Pod) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		cm, err := k.client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		text, ok := cm.Data["config.conf"]
		if !ok {
			continue
		}
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
			return "", fmt.Errorf("ConfigMap %s: %v", cm.Name, err)
		}
		conn, _ := doc["clientConnection"].(map[string]any)
		if conn == nil {
			conn = map[string]any{}
		}
		conn["kubeconfig"] = k.c.proxyConfig
		doc["clientConnection"] = conn
		out, err := yaml.Marshal(doc)
		if err != nil {
			return "", err
		}
		file := filepath.Join(k.c.dir, "kube-proxy.conf")
		return file, os.WriteFile(file, out, 0o644)
	}
	return "", fmt.Errorf("pod %s mounts no ConfigMap with config.conf", pod.Name)
}
