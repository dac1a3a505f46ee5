package gordon

import (
	"context"
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/shared/status"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// sampleText writes samples as `metric value`, in order.
func sampleText(samples []status.Sample) []string {
	names := map[any]string{desiredPods: "desired", managedPods: "managed", readyPods: "ready", updatedPods: "updated"}
	out := make([]string, 0, len(samples))
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s%v %g", names[s.Gauge], s.Labels, s.Value))
	}
	return out
}

func TestGordonSamplesSayWhatTheSpecAndStatusSay(t *testing.T) {
	gordon := func(replicas *int32, have, ready, updated int32) *v1.Gordon {
		g := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "g"}}
		g.Spec.Gordon.Replicas = replicas
		g.Status = v1.GordonStatus{Replicas: have, ReadyReplicas: ready, UpdatedReplicas: updated}
		return g
	}
	for _, tt := range []struct {
		name string
		g    *v1.Gordon
		want []string
	}{
		{"all Ready on the current template", gordon(ptr.To[int32](3), 3, 3, 3),
			[]string{"desired[ns g] 3", "managed[ns g] 3", "ready[ns g] 3", "updated[ns g] 3"}},
		{"half way through a rollout, one surge pod", gordon(ptr.To[int32](4), 5, 4, 2),
			[]string{"desired[ns g] 4", "managed[ns g] 5", "ready[ns g] 4", "updated[ns g] 2"}},
		{"scaled to zero", gordon(ptr.To[int32](0), 2, 2, 2),
			[]string{"desired[ns g] 0", "managed[ns g] 2", "ready[ns g] 2", "updated[ns g] 2"}},
		{"replicas unset: the CRD's default of 1, no status yet", gordon(nil, 0, 0, 0),
			[]string{"desired[ns g] 1", "managed[ns g] 0", "ready[ns g] 0", "updated[ns g] 0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sampleText(gordonSamples(tt.g)); !slices.Equal(got, tt.want) {
				t.Errorf("samples\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

func TestADeletedPodIsCountedForWhyItWasDeleted(t *testing.T) {
	pod := func(phase corev1.PodPhase, hash string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1.TemplateHashLabel: hash}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	for _, tt := range []struct {
		name string
		got  string
		want string
	}{
		{"terminated, Failed (evicted)", terminatedReason(pod(corev1.PodFailed, "current")), replacedFailed},
		{"terminated, Succeeded", terminatedReason(pod(corev1.PodSucceeded, "current")), replacedSucceeded},
		{"active, of an older template", planReason(pod(corev1.PodRunning, "old"), "current"), replacedOutdated},
		{"active, without a template hash (v0.3.0 or earlier)", planReason(pod(corev1.PodRunning, ""), "current"), replacedOutdated},
		{"active, of the current template", planReason(pod(corev1.PodRunning, "current"), "current"), replacedExcess},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: reason %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// replacedReasons are every value of the reason label.
var replacedReasons = []string{replacedFailed, replacedSucceeded, replacedOutdated, replacedExcess}

// A Gordon's counters start at 0 for every reason, count its deletions, and go with it, as
// its gauges do.
func TestRecordedGordonMetricsGoWithTheGordon(t *testing.T) {
	g := NewWithT(t)
	gordon := &v1.Gordon{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "metrics"}}
	recordGordonMetrics(gordon)
	for _, reason := range replacedReasons {
		g.Expect(replaced(gordon, reason)(g)).To(BeZero(), "%s before any deletion", reason)
	}
	countReplaced(gordon, replacedOutdated)
	countReplaced(gordon, replacedOutdated)
	g.Expect(replaced(gordon, replacedOutdated)(g)).To(BeEquivalentTo(2))
	g.Expect(replaced(gordon, replacedExcess)(g)).To(BeZero())

	forgetGordonMetrics(types.NamespacedName{Namespace: "ns", Name: "metrics"})
	for _, name := range []string{"quintet_gordon_pods_replaced_total", "quintet_gordon_desired_pods", "quintet_gordon_managed_pods",
		"quintet_gordon_ready_pods", "quintet_gordon_updated_pods"} {
		g.Expect(seriesOf(g, name, "ns", "metrics")).To(BeEmpty(), "%s after the Gordon went", name)
	}
}

func TestGordonMetricsFollowItsPodsAndGoWithIt(t *testing.T) {
	g := NewWithT(t)
	gordon := newGordon(t, newNamespace(t), 2)
	runPods(g, waitForPods(t, gordon, 2))
	waitReady(t, gordon, 2)
	g.Eventually(func(g Gomega) {
		for _, name := range []string{"quintet_gordon_desired_pods", "quintet_gordon_managed_pods", "quintet_gordon_ready_pods", "quintet_gordon_updated_pods"} {
			series := seriesOf(g, name, gordon.Namespace, gordon.Name)
			g.Expect(series).To(HaveLen(1), name)
			g.Expect(series[0].Value).To(BeEquivalentTo(2), name)
		}
		g.Expect(seriesOf(g, "quintet_gordon_pods_replaced_total", gordon.Namespace, gordon.Name)).To(HaveLen(len(replacedReasons)))
	}, timeout, tick).Should(Succeed())

	g.Expect(env.Client.Delete(context.Background(), gordon)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, name := range []string{"quintet_gordon_desired_pods", "quintet_gordon_ready_pods", "quintet_gordon_pods_replaced_total"} {
			g.Expect(seriesOf(g, name, gordon.Namespace, gordon.Name)).To(BeEmpty(), name)
		}
	}, timeout, tick).Should(Succeed())
}

// replaced reads gordon's quintet_gordon_pods_replaced_total of reason, which must be there.
func replaced(gordon *v1.Gordon, reason string) func(Gomega) float64 {
	return func(g Gomega) float64 {
		series := seriesOf(g, "quintet_gordon_pods_replaced_total", gordon.Namespace, gordon.Name, "reason", reason)
		g.Expect(series).To(HaveLen(1), "quintet_gordon_pods_replaced_total{reason=%q}", reason)
		return series[0].Value
	}
}

// seriesOf are the series of the metric name of a Gordon, with the labels of more too
// (name, value, ...).
func seriesOf(g Gomega, name, namespace, gordon string, more ...string) []testenv.Sample {
	match := map[string]string{"namespace": namespace, "name": gordon}
	for i := 0; i+1 < len(more); i += 2 {
		match[more[i]] = more[i+1]
	}
	series, err := testenv.Series(name, match)
	g.Expect(err).NotTo(HaveOccurred())
	return series
}
