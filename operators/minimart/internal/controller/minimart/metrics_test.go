package minimart

import (
	"context"
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/status"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// releaseActions are every value of the action label.
var releaseActions = []string{actionInstall, actionUpgrade, actionUninstall}

// sampleText writes samples as `metric[labels after namespace and name] value`, in order.
func sampleText(samples []status.Sample) []string {
	names := map[any]string{releaseRevision: "revision", releaseStatus: "status"}
	out := make([]string, 0, len(samples))
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s%v %g", names[s.Gauge], s.Labels[2:], s.Value))
	}
	return out
}

func TestReleaseSamplesSayTheDeployedRevisionAndTheNewestOnesStatus(t *testing.T) {
	minimart := func(deployed int) *v1alpha1.Minimart {
		m := &v1alpha1.Minimart{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "shop"}}
		if deployed > 0 {
			m.Status.DeployedRelease = &v1alpha1.DeployedRelease{Name: "shop", Revision: deployed, ChartVersion: "0.1.0"}
		}
		return m
	}
	for _, tt := range []struct {
		name string
		m    *v1alpha1.Minimart
		last *release.Release
		want []string
	}{
		{"deployed", minimart(3), revision(3, release.StatusDeployed, "Shop", now()), []string{"status[deployed] 1", "revision[] 3"}},
		{"an upgrade failed: the revision before stays deployed", minimart(3), revision(4, release.StatusFailed, "Shop", now()),
			[]string{"status[failed] 1", "revision[] 3"}},
		{"helm upgrade by hand under way", minimart(3), revision(4, release.StatusPendingUpgrade, "Shop", now()),
			[]string{"status[pending-upgrade] 1", "revision[] 3"}},
		{"the first install failed: nothing deployed", minimart(0), revision(1, release.StatusFailed, "Shop", now()),
			[]string{"status[failed] 1"}},
		{"no revision read", minimart(0), nil, []string{"status[unknown] 1"}},
		{"a status Helm did not have", minimart(2), revision(2, release.Status("archived"), "Shop", now()),
			[]string{"status[unknown] 1", "revision[] 2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sampleText(releaseSamples(tt.m, tt.last)); !slices.Equal(got, tt.want) {
				t.Errorf("samples\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// A Minimart's counters start at 0, count what happens with its labels, and go with it, as
// its gauges do; its status series is one at a time.
func TestRecordedReleaseMetricsCountAndGoWithTheMinimart(t *testing.T) {
	g := NewWithT(t)
	m := &v1alpha1.Minimart{ObjectMeta: metav1.ObjectMeta{Namespace: "unit", Name: "counted"}}
	recordReleaseMetrics(m, revision(1, release.StatusPendingInstall, "Shop", now()))
	for _, action := range releaseActions {
		if got := value(g, "quintet_minimart_release_failures_total", m, "action", action); got != 0 {
			t.Errorf("%s failures before any: %v, want 0", action, got)
		}
	}
	countReleaseFailure(m, actionUpgrade)
	countReleaseFailure(m, actionUpgrade)
	countDriftCorrections(m, 2)
	if got := value(g, "quintet_minimart_release_failures_total", m, "action", actionUpgrade); got != 2 {
		t.Errorf("upgrade failures after two: %v, want 2", got)
	}
	if got := value(g, "quintet_minimart_release_failures_total", m, "action", actionInstall); got != 0 {
		t.Errorf("install failures after two upgrades failed: %v, want 0", got)
	}
	if got := value(g, "quintet_minimart_drift_corrections_total", m); got != 2 {
		t.Errorf("drift corrections after two objects restored: %v, want 2", got)
	}
	m.Status.DeployedRelease = &v1alpha1.DeployedRelease{Name: "counted", Revision: 1}
	recordReleaseMetrics(m, revision(1, release.StatusDeployed, "Shop", now()))
	if got := value(g, "quintet_minimart_release_status", m, "status", "deployed"); got != 1 {
		t.Errorf("status deployed: %v, want 1", got)
	}
	if series := seriesOf(t, "quintet_minimart_release_status", m); len(series) != 1 {
		t.Errorf("status series: %v, want deployed alone", series)
	}
	forgetReleaseMetrics(types.NamespacedName{Namespace: "unit", Name: "counted"})
	for _, name := range minimartMetrics {
		if series := seriesOf(t, name, m); len(series) != 0 {
			t.Errorf("after the Minimart went: %s has %v, want none", name, series)
		}
	}
}

var minimartMetrics = []string{"quintet_minimart_release_revision", "quintet_minimart_release_status",
	"quintet_minimart_drift_corrections_total", "quintet_minimart_release_failures_total"}

func TestMinimartMetricsFollowItsReleaseAndGoWithIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	held := create(t, ns, "held", func(m *v1alpha1.Minimart) { m.Spec.Service.NodePort = ptr.To[int32](31240) })
	waitReady(t, ns, "held")
	g.Eventually(func(g Gomega) {
		g.Expect(seriesOf(t, "quintet_minimart_release_revision", held)).To(ConsistOf(HaveField("Value", BeEquivalentTo(1))))
		g.Expect(seriesOf(t, "quintet_minimart_release_status", held)).To(ConsistOf(
			testenv.Sample{Labels: map[string]string{"namespace": ns, "name": "held", "status": "deployed"}, Value: 1}))
		g.Expect(seriesOf(t, "quintet_minimart_release_failures_total", held)).To(HaveLen(len(releaseActions)))
		g.Expect(value(g, "quintet_minimart_drift_corrections_total", held)).To(BeZero())
	}, timeout, tick).Should(Succeed())

	// A deleted Service is put back: one object restored.
	g.Expect(env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(value(g, "quintet_minimart_drift_corrections_total", held)).To(BeNumerically(">=", 1))
	}, timeout, tick).Should(Succeed())

	// A second Minimart on the same node port fails to install: counted once (then backed
	// off), its newest revision failed and none deployed.
	clash := create(t, ns, "clash", func(m *v1alpha1.Minimart) { m.Spec.Service.NodePort = ptr.To[int32](31240) })
	g.Eventually(func(g Gomega) {
		g.Expect(value(g, "quintet_minimart_release_failures_total", clash, "action", actionInstall)).To(BeEquivalentTo(1))
		g.Expect(value(g, "quintet_minimart_release_status", clash, "status", "failed")).To(BeEquivalentTo(1))
		g.Expect(seriesOf(t, "quintet_minimart_release_revision", clash)).To(BeEmpty())
	}, timeout, tick).Should(Succeed())
	g.Expect(value(g, "quintet_minimart_release_failures_total", held, "action", actionInstall)).To(BeZero())

	for _, m := range []*v1alpha1.Minimart{held, clash} {
		g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		for _, m := range []*v1alpha1.Minimart{held, clash} {
			g.Expect(client.IgnoreNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(m), &v1alpha1.Minimart{}))).To(Succeed())
			for _, name := range minimartMetrics {
				g.Expect(seriesOf(t, name, m)).To(BeEmpty(), name)
			}
		}
	}, timeout, tick).Should(Succeed())
}

// value is the value of the one series of the metric name of m with the labels given as
// name, value pairs.
func value(g Gomega, name string, m *v1alpha1.Minimart, labels ...string) float64 {
	match := map[string]string{"namespace": m.Namespace, "name": m.Name}
	for i := 0; i+1 < len(labels); i += 2 {
		match[labels[i]] = labels[i+1]
	}
	series, err := testenv.Series(name, match)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(series).To(HaveLen(1), "%s%v", name, match)
	return series[0].Value
}

// seriesOf are the series of the metric name of m.
func seriesOf(t *testing.T, name string, m *v1alpha1.Minimart) []testenv.Sample {
	t.Helper()
	series, err := testenv.Series(name, map[string]string{"namespace": m.Namespace, "name": m.Name})
	if err != nil {
		t.Fatal(err)
	}
	return series
}
