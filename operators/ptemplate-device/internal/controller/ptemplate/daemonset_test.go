package ptemplate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
)

func TestConsumersTolerateWhatThePtemplateTolerates(t *testing.T) {
	taint := corev1.Toleration{Key: "example.com/devices", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	pt := &v1alpha.Ptemplate{Spec: v1alpha.PtemplateSpec{ResourceName: "example.com/ptemplate", RequiredDevices: 1,
		Tolerations: []corev1.Toleration{taint}}}
	got := consumers(pt, nil).Spec.Template.Spec.Tolerations
	if !equality.Semantic.DeepEqual(got, []corev1.Toleration{taint}) {
		t.Fatalf("consumer tolerations %v, want %v", got, []corev1.Toleration{taint})
	}
}
