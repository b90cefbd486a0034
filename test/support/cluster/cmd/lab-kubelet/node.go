package main

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

const kubeletPort = 10250

type kubelet struct {
	c      config
	client kubernetes.Interface
	mu     sync.Mutex
	pods   map[string]*labPod // by Pod UID
	used   map[string]bool    // Pod IPs handed out
}

func newKubelet(c config, client kubernetes.Interface) *kubelet {
	return &kubelet{c: c, client: client, pods: map[string]*labPod{}, used: map[string]bool{}}
}

// registerNode creates the Node (or takes over the one a previous run left) and marks it Ready.
func (k *kubelet) registerNode(ctx context.Context) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: k.c.node,
			Labels: map[string]string{
				"kubernetes.io/hostname": k.c.node,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
			},
		},
		Spec: corev1.NodeSpec{PodCIDR: k.c.podCIDRs[0], PodCIDRs: k.c.podCIDRs},
	}
	_, err := k.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return k.updateNodeStatus(ctx)
}

func (k *kubelet) updateNodeStatus(ctx context.Context) error {
	node, err := k.client.CoreV1().Nodes().Get(ctx, k.c.node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("8"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "lab-kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Addresses:       append(internalIPs(k.c.ips), corev1.NodeAddress{Type: corev1.NodeHostName, Address: k.c.node}),
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: kubeletPort}},
		NodeInfo: corev1.NodeSystemInfo{
			OperatingSystem: "linux", Architecture: "amd64", OSImage: "kdebug lab (network namespaces)",
			KernelVersion: "lab", ContainerRuntimeVersion: "lab://none", KubeletVersion: "lab-kubelet",
		},
	}
	_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

func internalIPs(ips []string) []corev1.NodeAddress {
	out := make([]corev1.NodeAddress, 0, len(ips)+1)
	for _, ip := range ips {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	return out
}

// heartbeat keeps the Ready condition fresh for the node lifecycle controller.
func (k *kubelet) heartbeat(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := k.updateNodeStatus(ctx); err != nil && ctx.Err() == nil {
				klog.Warningf("node status: %v", err)
			}
		}
	}
}
