package minimart

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// A standby replica recovers at once the install a leader killed mid-way left pending, when it
// takes over: that install began after the standby started, but before it led. (Until it
// counted from its start, the standby took the revision for another client's and waited
// StalePending, five minutes, before it recovered it.)
func TestAReleaseLeftPendingByAKilledLeaderIsRecoveredOnceTheStandbyLeads(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)

	// The killed leader's lease, renewed for the last time just now.
	const lease = "minimart-takeover-test"
	renewed := metav1.NowMicro()
	g.Expect(env.Client.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: lease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("killed-leader"), LeaseDurationSeconds: ptr.To(int32(3)),
			AcquireTime: &renewed, RenewTime: &renewed}})).To(Succeed())
	standby := runStandby(t, ns, lease)

	// The install the leader had under way: a first revision, pending-install. To the suite's
	// manager, which has led all along, it is another client's, and it waits.
	cfg, err := reconciler.Releases.ActionConfig(ns)
	g.Expect(err).NotTo(HaveOccurred())
	const name = "taken-over"
	g.Expect(cfg.Releases.Create(&release.Release{Name: name, Namespace: ns, Version: 1, Chart: reconciler.Releases.Chart, Config: map[string]any{},
		Info: &release.Info{Status: release.StatusPendingInstall, Description: "Initial install underway",
			FirstDeployed: helmtime.Now(), LastDeployed: helmtime.Now()}})).To(Succeed())
	create(t, ns, name, nil)

	start := time.Now()
	m := waitReady(t, ns, name)
	t.Logf("Ready %s after the pending install was stored", time.Since(start).Round(time.Millisecond))
	g.Expect(m.Status.DeployedRelease.Revision).To(Equal(2))
	revisions := history(g, ns, name)
	g.Expect(revisions).To(HaveLen(2))
	g.Expect(revisions[0].Info.Description).To(ContainSubstring("pending-install was interrupted"), "marked failed, then superseded by the upgrade")
	g.Expect(standby.Events.Emitted(m, v1alpha1.ReasonReleaseRecovered)).To(Equal(1), "the standby recovered it")
	g.Expect(events.Emitted(m, v1alpha1.ReasonReleaseRecovered)).To(Equal(0), "the suite's manager left it to its other client")
}

// runStandby runs a second manager of Minimarts in ns, electing its leader on the Lease named
// lease there (3 s, renewed every 200 ms), until the test ends.
func runStandby(t *testing.T, ns, lease string) *testenv.Manager {
	t.Helper()
	g := NewWithT(t)
	mgr, err := env.NewManager(testenv.ManagerOptions{EventSource: "minimart-standby", Customize: func(o *ctrl.Options) {
		CacheOptions(o)
		o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
		o.LeaderElection, o.LeaderElectionNamespace, o.LeaderElectionID = true, ns, lease
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = ptr.To(3*time.Second), ptr.To(2*time.Second), ptr.To(200*time.Millisecond)
		o.LeaderElectionReleaseOnCancel = true
		o.Controller.SkipNameValidation = ptr.To(true) // the suite's manager runs a "minimart" controller too
	}})
	g.Expect(err).NotTo(HaveOccurred())
	r := &Reconciler{Client: mgr.Writes, Releases: reconciler.Releases, Recorder: mgr.Events}
	g.Expect(r.SetupWithManager(mgr)).To(Succeed())
	mgr.RunForTest(t)
	return mgr
}
