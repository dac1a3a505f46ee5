package etcdcluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/ensure"
)

func TestStatefulSetLosesPolicyFieldsTheSpecNoLongerSets(t *testing.T) {
	withPolicy := &v1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default"},
		Spec: v1beta2.EtcdClusterSpec{Size: 3, Version: "3.6.8", Repository: "etcd", Pod: &v1beta2.PodPolicy{
			EtcdArgs:     []string{"--quota-backend-bytes=4294967296"},
			NodeSelector: map[string]string{"disk": "ssd"},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
			Resources:    corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		}},
	}
	without := withPolicy.DeepCopy()
	without.Spec.Pod = nil

	existing := statefulSet(withPolicy, 3, memberTemplate{version: "3.6.8"})
	if changed, err := ensure.CopyManagedFields(statefulSet(without, 3, memberTemplate{version: "3.6.8"}), existing); err != nil || !changed {
		t.Fatal("clearing the pod policy must update the StatefulSet")
	}
	pod := existing.Spec.Template.Spec
	if len(pod.Containers[0].Args) != 0 || len(pod.NodeSelector) != 0 || len(pod.Tolerations) != 0 || len(pod.Containers[0].Resources.Limits) != 0 {
		t.Fatalf("policy fields left behind: args %v, nodeSelector %v, tolerations %v, limits %v",
			pod.Containers[0].Args, pod.NodeSelector, pod.Tolerations, pod.Containers[0].Resources.Limits)
	}
	if changed, _ := ensure.CopyManagedFields(statefulSet(without, 3, memberTemplate{version: "3.6.8"}), existing); changed {
		t.Fatal("an unchanged StatefulSet must not be written again")
	}
}

func TestMembersCompactHourlyAndSpreadOverNodesUnlessTheSpecSaysOtherwise(t *testing.T) {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default"},
		Spec: v1beta2.EtcdClusterSpec{Size: 3, Version: "3.6.8", Repository: "etcd"}}
	defaults := statefulSet(c, 3, memberTemplate{version: "3.6.8"})
	pod := defaults.Spec.Template.Spec
	if env := envOf(pod.Containers[0]); env["ETCD_AUTO_COMPACTION_MODE"] != "periodic" || env["ETCD_AUTO_COMPACTION_RETENTION"] != "1h" {
		t.Fatalf("compaction env %v; want periodic, 1h", env)
	}
	if a := pod.Affinity.PodAntiAffinity; len(a.PreferredDuringSchedulingIgnoredDuringExecution) != 1 || len(a.RequiredDuringSchedulingIgnoredDuringExecution) != 0 ||
		a.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != corev1.LabelHostname {
		t.Fatalf("anti-affinity %+v; want members preferably on different nodes", a)
	}

	// etcd refuses to start with both a flag and its variable: the user's flag wins alone.
	own := c.DeepCopy()
	own.Spec.Pod = &v1beta2.PodPolicy{EtcdArgs: []string{"--auto-compaction-retention=10m"}, AntiAffinity: v1beta2.AntiAffinityRequired}
	existing := defaults.DeepCopy()
	if changed, err := ensure.CopyManagedFields(statefulSet(own, 3, memberTemplate{version: "3.6.8"}), existing); err != nil || !changed {
		t.Fatal("a compaction flag and a required anti-affinity must update the StatefulSet")
	}
	pod = existing.Spec.Template.Spec
	if env := envOf(pod.Containers[0]); env["ETCD_AUTO_COMPACTION_MODE"] != "" || env["ETCD_AUTO_COMPACTION_RETENTION"] != "" {
		t.Fatalf("compaction env %v left beside --auto-compaction-retention", env)
	}
	if a := pod.Affinity.PodAntiAffinity; len(a.RequiredDuringSchedulingIgnoredDuringExecution) != 1 || len(a.PreferredDuringSchedulingIgnoredDuringExecution) != 0 {
		t.Fatalf("anti-affinity %+v; want required only", a)
	}
}

func envOf(c corev1.Container) map[string]string {
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return env
}

func TestMembersGetTheProxySettingsOLMGaveTheManager(t *testing.T) {
	c := &v1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default"},
		Spec:       v1beta2.EtcdClusterSpec{Size: 3, Version: "3.6.8", Repository: "etcd"},
	}
	proxy := corev1.EnvVar{Name: "HTTPS_PROXY", Value: "http://proxy.example:3128"}
	env := statefulSet(c, 3, memberTemplate{version: "3.6.8", proxyEnv: []corev1.EnvVar{proxy}}).Spec.Template.Spec.Containers[0].Env
	if env[len(env)-1] != proxy || env[0].Name != "ETCD_NAME" {
		t.Errorf("env %v: want etcd's variables, then the proxy settings", env)
	}
	if without := statefulSet(c, 3, memberTemplate{version: "3.6.8"}).Spec.Template.Spec.Containers[0].Env; len(without) != len(env)-1 {
		t.Errorf("without proxy settings: %v", without)
	}
}

func TestCopyManagedFieldsRefusesWhatItDoesNotManageWithoutPanicking(t *testing.T) {
	if _, err := ensure.CopyManagedFields(&corev1.ConfigMap{}, &corev1.ConfigMap{}); err == nil {
		t.Fatal("a kind the operator does not manage must be an error")
	}
	c := &v1beta2.EtcdCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "example", Namespace: "default"},
		Spec:       v1beta2.EtcdClusterSpec{Size: 3, Version: "3.6.8", Repository: "etcd"},
	}
	emptied := statefulSet(c, 3, memberTemplate{version: "3.6.8"})
	emptied.Spec.Template.Spec.Containers = nil // edited by hand: the update restores the member container
	if changed, err := ensure.CopyManagedFields(statefulSet(c, 3, memberTemplate{version: "3.6.8"}), emptied); err != nil || !changed {
		t.Fatalf("changed %v, err %v: a StatefulSet without its container must be restored", changed, err)
	}
}
