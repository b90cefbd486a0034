package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"
)

// probeLoop runs each container's readiness check against the Pod, as the kubelet does, and
// writes the Pod's status whenever a result changes (and once at start).
func (k *kubelet) probeLoop(ctx context.Context, p *labPod) {
	first := true
	for {
		changed := first
		p.mu.Lock()
		pod := p.pod
		p.mu.Unlock()
		for _, c := range pod.Spec.Containers {
			ok := k.containerRunning(p, c.Name) && k.ready(ctx, p, c)
			if p.ready[c.Name] != ok || first {
				changed = true
			}
			p.ready[c.Name] = ok
		}
		if changed {
			if err := k.writeStatus(ctx, p); err != nil && ctx.Err() == nil {
				klog.Warningf("status of %s/%s: %v", pod.Namespace, pod.Name, err)
				changed = true
				p.ready = map[string]bool{} // try again next round
			}
		}
		first = false
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// ready is the container's readiness probe, run from the node against the Pod's IP.
func (k *kubelet) ready(ctx context.Context, p *labPod, c corev1.Container) bool {
	probe := c.ReadinessProbe
	if probe == nil {
		return true
	}
	timeout := 2 * time.Second
	switch {
	case probe.HTTPGet != nil:
		port, err := portOf(c, probe.HTTPGet.Port)
		if err != nil {
			return false
		}
		url := fmt.Sprintf("http://%s%s", net.JoinHostPort(p.ips[0], strconv.Itoa(port)), probe.HTTPGet.Path)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := (&http.Client{Timeout: timeout}).Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode >= 200 && resp.StatusCode < 400
	case probe.TCPSocket != nil:
		port, err := portOf(c, probe.TCPSocket.Port)
		if err != nil {
			return false
		}
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(p.ips[0], strconv.Itoa(port)), timeout)
		if err != nil {
			return false
		}
		conn.Close()
		return true
	case probe.Exec != nil:
		return k.command(p, probe.Exec.Command).Run() == nil
	}
	return true
}

func portOf(c corev1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, cp := range c.Ports {
		if cp.Name == port.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no container port named %q", port.StrVal)
}

// command is argv run as if inside the Pod: in its network namespace.
func (k *kubelet) command(p *labPod, argv []string) *exec.Cmd {
	if p.netns == "" {
		return exec.Command(argv[0], argv[1:]...)
	}
	return exec.Command("nsenter", append([]string{"--net=" + nsPath(p.netns), "--"}, argv...)...)
}

func (k *kubelet) writeStatus(ctx context.Context, p *labPod) error {
	p.mu.Lock()
	pod := p.pod.DeepCopy()
	p.mu.Unlock()
	all := true
	var statuses []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		ready := p.ready[c.Name]
		all = all && ready
		st := corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "lab://" + c.Image,
			ContainerID: fmt.Sprintf("lab://%s-%s", pod.UID, c.Name), Ready: ready,
			Started: ptr(true), RestartCount: p.restart[c.Name],
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: p.started}},
		}
		if !k.containerRunning(p, c.Name) {
			st.Started = ptr(false)
			st.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason: "CrashLoopBackOff", Message: "back-off restarting failed container " + c.Name,
			}}
			st.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
		}
		statuses = append(statuses, st)
	}
	cond := func(t corev1.PodConditionType, ok bool) corev1.PodCondition {
		s := corev1.ConditionTrue
		reason := ""
		if !ok {
			s, reason = corev1.ConditionFalse, "ContainersNotReady"
		}
		return corev1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: metav1.Now()}
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.HostIP, pod.Status.PodIP = k.c.ips[0], p.ips[0]
	pod.Status.HostIPs, pod.Status.PodIPs = nil, nil
	for _, ip := range k.c.ips {
		pod.Status.HostIPs = append(pod.Status.HostIPs, corev1.HostIP{IP: ip})
	}
	for _, ip := range p.ips {
		pod.Status.PodIPs = append(pod.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	pod.Status.StartTime = &p.started
	pod.Status.ContainerStatuses = statuses
	pod.Status.Conditions = []corev1.PodCondition{
		cond("PodReadyToStartContainers", true), cond(corev1.PodInitialized, true),
		cond(corev1.ContainersReady, all), cond(corev1.PodReady, all), cond(corev1.PodScheduled, true),
	}
	_, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

func ptr[T any](v T) *T { return &v }
