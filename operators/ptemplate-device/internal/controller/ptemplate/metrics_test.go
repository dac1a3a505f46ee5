package ptemplate

import (
	"context"
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/shared/status"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// ptemplateMetrics are the names of every series a Ptemplate has.
var ptemplateMetrics = []string{"quintet_ptemplate_consumers", "quintet_ptemplate_ready_consumers",
	"quintet_ptemplate_module_ready", "quintet_ptemplate_module_nodes"}

// sampleText writes samples as `metric[labels] value`, in order.
func sampleText(samples []status.Sample) []string {
	names := map[any]string{consumerPods: "consumers", readyConsumerPods: "ready", moduleReady: "moduleReady", moduleNodes: "moduleNodes"}
	out := make([]string, 0, len(samples))
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s%v %g", names[s.Gauge], s.Labels, s.Value))
	}
	return out
}

func TestPtemplateSamplesSayWhatTheStatusSays(t *testing.T) {
	ptemplate := func(consumers []string, ready int32, nodes []string) *v1alpha.Ptemplate {
		pt := &v1alpha.Ptemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pt"}}
		pt.Status = v1alpha.PtemplateStatus{Consumers: consumers, ReadyConsumers: ready, Nodes: nodes}
		return pt
	}
	for _, tt := range []struct {
		name string
		pt   *v1alpha.Ptemplate
		want []string
	}{
		{"loaded on two nodes, one consumer of two Ready", ptemplate([]string{"c-1", "c-2"}, 1, []string{"n-1", "n-2"}),
			[]string{"consumers[ns pt] 2", "ready[ns pt] 1", "moduleReady[ns pt] 1", "moduleNodes[ns pt] 2"}},
		{"loaded nowhere yet (or KMM missing): no consumer", ptemplate(nil, 0, nil),
			[]string{"consumers[ns pt] 0", "ready[ns pt] 0", "moduleReady[ns pt] 0", "moduleNodes[ns pt] 0"}},
		{"loaded on one node, its consumer Ready", ptemplate([]string{"c-1"}, 1, []string{"n-1"}),
			[]string{"consumers[ns pt] 1", "ready[ns pt] 1", "moduleReady[ns pt] 1", "moduleNodes[ns pt] 1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sampleText(ptemplateSamples(tt.pt)); !slices.Equal(got, tt.want) {
				t.Errorf("samples\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

func TestRecordedPtemplateMetricsGoWithThePtemplate(t *testing.T) {
	g := NewWithT(t)
	pt := &v1alpha.Ptemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "metrics"}}
	pt.Status.Nodes = []string{"n-1"}
	recordPtemplateMetrics(pt)
	g.Expect(gauge("quintet_ptemplate_module_ready", "ns", "metrics")(g)).To(BeEquivalentTo(1))
	pt.Status.Nodes = nil
	recordPtemplateMetrics(pt)
	g.Expect(gauge("quintet_ptemplate_module_ready", "ns", "metrics")(g)).To(BeZero())
	forgetPtemplateMetrics(types.NamespacedName{Namespace: "ns", Name: "metrics"})
	for _, name := range ptemplateMetrics {
		g.Expect(seriesOf(g, name, "ns", "metrics")).To(BeEmpty(), name)
	}
}

// A Ptemplate has its series from its first pass (waiting for KMM or not), and loses them
// when it is deleted. Whether KMM is installed yet depends on the tests run before.
func TestAPtemplatesMetricsGoWithIt(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	applySample(t, ns)
	g.Eventually(func(g Gomega) {
		for _, name := range ptemplateMetrics {
			g.Expect(gauge(name, ns, sampleName)(g)).To(BeZero(), name)
		}
	}, timeout, tick).Should(Succeed())

	g.Expect(env.Client.Delete(context.Background(), getPtemplate(g, ns))).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, name := range ptemplateMetrics {
			g.Expect(seriesOf(g, name, ns, sampleName)).To(BeEmpty(), name)
		}
	}, timeout, tick).Should(Succeed())
}

// gauge reads a Ptemplate's series of the metric name, which must be there.
func gauge(name, namespace, ptemplate string) func(Gomega) float64 {
	return func(g Gomega) float64 {
		series := seriesOf(g, name, namespace, ptemplate)
		g.Expect(series).To(HaveLen(1), name)
		return series[0].Value
	}
}

// seriesOf are a Ptemplate's series of the metric name.
func seriesOf(g Gomega, name, namespace, ptemplate string) []testenv.Sample {
	series, err := testenv.Series(name, map[string]string{"namespace": namespace, "name": ptemplate})
	g.Expect(err).NotTo(HaveOccurred())
	return series
}
