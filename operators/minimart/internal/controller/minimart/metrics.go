package minimart

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/status"
)

// minimartLabels are the names of the labels every series has (the Minimart's namespace and
// name, which is its release's), then extra.
func minimartLabels(extra ...string) []string { return append([]string{"namespace", "name"}, extra...) }

// What the operator knows of each Minimart's release, as Prometheus metrics on the manager's
// /metrics. Labels are bounded: the Minimart, one of Helm's nine statuses, one of the
// operator's three Helm actions.
var (
	releaseRevision = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_minimart_release_revision",
		Help: "The revision of a Minimart's Helm release that is deployed (status.deployedRelease.revision).",
	}, minimartLabels())
	releaseStatus = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_minimart_release_status",
		Help: "Always 1, on the Helm status of the newest revision of a Minimart's release (helm list's STATUS); unknown when the operator read none.",
	}, minimartLabels("status"))
	driftCorrections = status.NewCounter(prometheus.CounterOpts{
		Name: "quintet_minimart_drift_corrections_total",
		Help: "Objects of a Minimart's release the operator put back as the release has them, after they were deleted or edited.",
	}, "")
	releaseFailures = status.NewCounter(prometheus.CounterOpts{
		Name: "quintet_minimart_release_failures_total",
		Help: "Helm actions on a Minimart's release that failed, by action: install, upgrade, uninstall (the operator never rolls back).",
	}, "action", actionInstall, actionUpgrade, actionUninstall)
)

// The Helm actions the operator runs: the action label of quintet_minimart_release_failures_total.
const (
	actionInstall   = "install"
	actionUpgrade   = "upgrade"
	actionUninstall = "uninstall"
)

// helmStatuses are the statuses Helm gives a revision: every value of the status label.
var helmStatuses = []release.Status{
	release.StatusUnknown, release.StatusDeployed, release.StatusUninstalled, release.StatusSuperseded, release.StatusFailed,
	release.StatusUninstalling, release.StatusPendingInstall, release.StatusPendingUpgrade, release.StatusPendingRollback,
}

func init() {
	status.MustRegister(exported, driftCorrections, releaseFailures)
}

// releaseSamples are the gauge series of m's release: the revision its status says is
// deployed, and the status of last, the release's newest revision as the pass left it (nil
// when it read none). It is pure.
func releaseSamples(m *v1alpha1.Minimart, last *release.Release) []status.Sample {
	of := func(g *status.Gauge, value float64, labels ...string) status.Sample {
		return status.Sample{Gauge: g, Labels: append([]string{m.Namespace, m.Name}, labels...), Value: value}
	}
	out := []status.Sample{of(releaseStatus, 1, string(helmStatus(last)))}
	if d := m.Status.DeployedRelease; d != nil {
		out = append(out, of(releaseRevision, float64(d.Revision)))
	}
	return out
}

// helmStatus is rel's status, unknown when there is no revision or Helm gave it a status it
// did not have when this was written.
func helmStatus(rel *release.Release) release.Status {
	if rel == nil || rel.Info == nil || !slices.Contains(helmStatuses, rel.Info.Status) {
		return release.StatusUnknown
	}
	return rel.Info.Status
}

// exported are each Minimart's gauge series: one status at a time, and no revision before
// one is deployed.
var exported = status.NewSeries[types.NamespacedName](releaseRevision, releaseStatus)

// recordReleaseMetrics exports m's release, and starts its counters at 0 (every action), so
// that the first drift correction or failure shows as an increase.
func recordReleaseMetrics(m *v1alpha1.Minimart, last *release.Release) {
	exported.Set(types.NamespacedName{Namespace: m.Namespace, Name: m.Name}, releaseSamples(m, last))
	driftCorrections.Start(m.Namespace, m.Name)
	releaseFailures.Start(m.Namespace, m.Name)
}

// countDriftCorrections counts n objects of m's release put back.
func countDriftCorrections(m *v1alpha1.Minimart, n int) {
	driftCorrections.Add(m.Namespace, m.Name, float64(n))
}

// countReleaseFailure counts a Helm action on m's release that failed.
func countReleaseFailure(m *v1alpha1.Minimart, action string) {
	releaseFailures.Add(m.Namespace, m.Name, 1, action)
}

// forgetReleaseMetrics drops every series of a Minimart that is gone, its counters included.
func forgetReleaseMetrics(key types.NamespacedName) {
	exported.Forget(key)
	driftCorrections.Forget(key.Namespace, key.Name)
	releaseFailures.Forget(key.Namespace, key.Name)
}
