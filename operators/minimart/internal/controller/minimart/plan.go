package minimart

import (
	"encoding/json"
	"reflect"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/quintet-operators/quintet/operators/minimart/api/v1alpha1"
)

// step is what a pass does with the release.
type step int

const (
	// stepNone: the release is deployed as the spec asks; only drift is checked.
	stepNone step = iota
	// stepInstall: there is no release yet.
	stepInstall
	// stepUpgrade: the spec or the chart changed, or the last operation failed.
	stepUpgrade
	// stepRecover: the newest revision is pending, left by an operation that was cut off; it
	// is marked failed, then the release upgraded.
	stepRecover
	// stepWait: the last operation failed for this very spec; it is retried after a backoff.
	stepWait
	// stepWaitOther: someone else (the helm CLI) is operating on the release: uninstalling,
	// rolling back, upgrading. The operator looks again shortly.
	stepWaitOther
)

// otherRecheck is how often a pass looks again at a release someone else operates on.
const otherRecheck = 2 * time.Second

// StalePending is how long a pending revision that someone else started while this manager
// leads may stay pending before it counts as cut off: Helm's default operation timeout.
const StalePending = 5 * time.Minute

// Backoff after failed operations on the same spec: 10 s, doubling, at most 5 minutes.
const (
	firstRetry = 10 * time.Second
	lastRetry  = 5 * time.Minute
)

// plan decides the step for a release whose revisions are history (oldest first) when the
// spec's values are values and the chart's version chartVersion, at now, for a manager
// that has led since leading; with stepWait and stepWaitOther it also says how long to wait.
//
// A pending revision is this operator's own only when it started before this manager led:
// its operations run to their end within a pass, one pass per Minimart at a time, on one
// leader. Such a revision was cut off (a leader killed mid-upgrade) and is recovered at
// once. One started since is someone else's (helm rollback by hand) and is waited for,
// unless it has been pending for StalePending.
func plan(history []*release.Release, values map[string]any, chartVersion string, now, leading time.Time) (step, time.Duration) {
	if len(history) == 0 {
		return stepInstall, 0
	}
	last := history[len(history)-1]
	switch since := last.Info.LastDeployed.Time; {
	case last.Info.Status == release.StatusUninstalling:
		return stepWaitOther, otherRecheck
	case last.Info.Status == release.StatusUninstalled: // helm uninstall --keep-history
		return stepInstall, 0
	case last.Info.Status.IsPending() && since.After(leading) && now.Sub(since) < StalePending:
		return stepWaitOther, otherRecheck
	case last.Info.Status.IsPending():
		return stepRecover, 0
	case !sameRelease(last, values, chartVersion):
		return stepUpgrade, 0
	case last.Info.Status == release.StatusDeployed:
		return stepNone, 0
	case last.Info.Status == release.StatusFailed:
		if wait := retryAt(history).Sub(now); wait > 0 {
			return stepWait, wait
		}
	}
	return stepUpgrade, 0
}

// retryAt is when the last operation, failed, may be tried again: the backoff doubles with
// each failure in a row at the top of history.
func retryAt(history []*release.Release) time.Time {
	failures := 0
	for i := len(history) - 1; i >= 0 && history[i].Info.Status == release.StatusFailed; i-- {
		failures++
	}
	backoff := firstRetry << min(failures-1, 5)
	return history[len(history)-1].Info.LastDeployed.Add(min(backoff, lastRetry)).Time
}

// sameRelease reports whether rel was made from values and the chart of chartVersion.
func sameRelease(rel *release.Release, values map[string]any, chartVersion string) bool {
	if rel.Chart == nil || rel.Chart.Metadata == nil || rel.Chart.Metadata.Version != chartVersion {
		return false
	}
	return reflect.DeepEqual(asJSON(rel.Config), asJSON(values))
}

// valuesOf is the chart values a Minimart's spec gives: the spec itself, as JSON.
func valuesOf(m *v1alpha1.Minimart) (map[string]any, error) {
	data, err := json.Marshal(m.Spec)
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	return values, json.Unmarshal(data, &values)
}
