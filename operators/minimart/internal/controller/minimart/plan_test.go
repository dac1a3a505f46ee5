package minimart

import (
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
)

func revision(version int, status release.Status, storeName string, at time.Time) *release.Release {
	return &release.Release{
		Name: "shop", Version: version,
		Info:   &release.Info{Status: status, LastDeployed: helmtime.Time{Time: at}},
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Version: "0.1.0"}},
		Config: map[string]any{"storeName": storeName, "replicaCount": 1},
	}
}

// now is the tests' fixed clock.
func now() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }

func TestPlan(t *testing.T) {
	now := now()
	leading := now.Add(-time.Hour)                                          // when the manager began to lead
	values := map[string]any{"storeName": "Shop", "replicaCount": int64(1)} // another number type, the same value
	deployed := func(at time.Time) *release.Release { return revision(1, release.StatusDeployed, "Shop", at) }
	cases := []struct {
		name     string
		history  []*release.Release
		chart    string
		want     step
		wantWait time.Duration
	}{
		{"no release", nil, "0.1.0", stepInstall, 0},
		{"deployed as asked", []*release.Release{deployed(now.Add(-time.Hour))}, "0.1.0", stepNone, 0},
		{"values changed", []*release.Release{revision(1, release.StatusDeployed, "Old", now)}, "0.1.0", stepUpgrade, 0},
		{"chart changed", []*release.Release{revision(1, release.StatusDeployed, "Shop", now)}, "0.2.0", stepUpgrade, 0},
		{"failed 4 s ago: wait", []*release.Release{revision(1, release.StatusFailed, "Shop", now.Add(-4*time.Second))}, "0.1.0", stepWait, 6 * time.Second},
		{"failed 11 s ago: retry", []*release.Release{revision(1, release.StatusFailed, "Shop", now.Add(-11*time.Second))}, "0.1.0", stepUpgrade, 0},
		{"failed three times: 40 s", []*release.Release{
			revision(1, release.StatusDeployed, "Shop", now.Add(-time.Hour)),
			revision(2, release.StatusFailed, "Shop", now.Add(-time.Minute)),
			revision(3, release.StatusFailed, "Shop", now.Add(-time.Minute)),
			revision(4, release.StatusFailed, "Shop", now.Add(-30*time.Second)),
		}, "0.1.0", stepWait, 10 * time.Second},
		{"failed many times: at most 5 minutes", []*release.Release{
			revision(1, release.StatusFailed, "Shop", now), revision(2, release.StatusFailed, "Shop", now),
			revision(3, release.StatusFailed, "Shop", now), revision(4, release.StatusFailed, "Shop", now),
			revision(5, release.StatusFailed, "Shop", now), revision(6, release.StatusFailed, "Shop", now),
			revision(7, release.StatusFailed, "Shop", now), revision(8, release.StatusFailed, "Shop", now),
		}, "0.1.0", stepWait, lastRetry},
		{"failed, then the spec changed: at once", []*release.Release{revision(1, release.StatusFailed, "Old", now)}, "0.1.0", stepUpgrade, 0},
		{"rolled back by hand: back to the spec", []*release.Release{revision(1, release.StatusSuperseded, "Shop", now), revision(2, release.StatusDeployed, "Old", now)}, "0.1.0", stepUpgrade, 0},
		{"pending since before the manager led: cut off", []*release.Release{deployed(leading.Add(-time.Hour)), revision(2, release.StatusPendingUpgrade, "Shop", leading.Add(-time.Second))}, "0.1.0", stepRecover, 0},
		{"pending-install since before the manager led", []*release.Release{revision(1, release.StatusPendingInstall, "Shop", leading.Add(-time.Second))}, "0.1.0", stepRecover, 0},
		{"pending since the manager led: someone else's", []*release.Release{deployed(leading), revision(2, release.StatusPendingRollback, "Old", now.Add(-time.Second))}, "0.1.0", stepWaitOther, otherRecheck},
		{"someone else's pending for too long: cut off", []*release.Release{deployed(leading), revision(2, release.StatusPendingUpgrade, "Old", now.Add(-StalePending))}, "0.1.0", stepRecover, 0},
		{"being uninstalled by someone else", []*release.Release{revision(1, release.StatusUninstalling, "Shop", now)}, "0.1.0", stepWaitOther, otherRecheck},
		{"uninstalled, history kept", []*release.Release{revision(1, release.StatusUninstalled, "Shop", now)}, "0.1.0", stepInstall, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, wait := plan(c.history, values, c.chart, now, leading)
			if got != c.want || wait != c.wantWait {
				t.Errorf("plan = %v, %v; want %v, %v", got, wait, c.want, c.wantWait)
			}
		})
	}
}
