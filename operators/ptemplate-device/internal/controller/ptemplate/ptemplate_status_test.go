package ptemplate

import (
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
)

func TestSetStatus(t *testing.T) {
	daemonSet := func(desired, ready int32) *appsv1.DaemonSet {
		ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		ds.Status = appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: desired, UpdatedNumberScheduled: desired, NumberReady: ready}
		return ds
	}
	pod := func(name string, ready bool, waiting string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if waiting != "" {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}}}
		}
		return p
	}
	tests := []struct {
		name     string
		seen     observed
		err      error
		ready    string
		consumer int32 // ready consumers
	}{
		{"the DaemonSet not made yet", observed{}, nil, v1alpha.ReasonConsumersNotReady, 0},
		{"no node has the module", observed{daemonSet: daemonSet(0, 0)}, nil, v1alpha.ReasonModuleNotLoaded, 0},
		{"a consumer starting", observed{daemonSet: daemonSet(2, 1), nodes: []string{"b", "a"},
			pods: []corev1.Pod{pod("c-1", true, ""), pod("c-2", false, "")}}, nil, v1alpha.ReasonConsumersNotReady, 1},
		{"a consumer that cannot pull its image", observed{daemonSet: daemonSet(2, 1), nodes: []string{"a", "b"},
			pods: []corev1.Pod{pod("c-1", true, ""), pod("c-2", false, "ImagePullBackOff")}}, nil, conditions.ReasonPodsFailing, 1},
		{"every consumer ready", observed{daemonSet: daemonSet(2, 2), nodes: []string{"a", "b"},
			pods: []corev1.Pod{pod("c-2", true, ""), pod("c-1", true, "")}}, nil, conditions.ReasonReady, 2},
		{"a DaemonSet of someone else's", observed{daemonSet: daemonSet(0, 0)},
			&ensure.NotOwnedError{Kind: "DaemonSet", Name: "x-consumer", Controller: "is controlled by no Ptemplate"}, conditions.ReasonObjectNotOwned, 0},
		{"a failed write", observed{daemonSet: daemonSet(0, 0)}, errors.New("connection refused"), conditions.ReasonReconcileFailed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pt := &v1alpha.Ptemplate{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 7}}
			setStatus(pt, tt.seen, tt.err)
			ready := conditions.Get(pt, conditions.ReadyCondition)
			if ready == nil || ready.Reason != tt.ready || ready.ObservedGeneration != 7 {
				t.Fatalf("Ready = %+v, want reason %s at generation 7", ready, tt.ready)
			}
			if pt.Status.ReadyConsumers != tt.consumer {
				t.Errorf("readyConsumers = %d, want %d", pt.Status.ReadyConsumers, tt.consumer)
			}
			if len(tt.seen.nodes) > 0 && pt.Status.Nodes[0] != "a" {
				t.Errorf("nodes %v, want them sorted", pt.Status.Nodes)
			}
		})
	}
}

func TestPtemplateOfModuleLabel(t *testing.T) {
	for label, want := range map[string]client.ObjectKey{
		ModuleReadyLabel("ns", "consumer-pod"): {Namespace: "ns", Name: "consumer-pod"},
		ModuleReadyLabel("ns", "a.b"):          {Namespace: "ns", Name: "a.b"},
		"kmm.node.kubernetes.io/ns.m.other":    {},
		"node-role.kubernetes.io/worker":       {},
	} {
		got, ok := ptemplateOfModuleLabel(label)
		if got != want || ok != (want.Name != "") {
			t.Errorf("ptemplateOfModuleLabel(%q) = %v, %v; want %v", label, got, ok, want)
		}
	}
}
