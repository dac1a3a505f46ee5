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
	// stepUpgrade: the spec or the chart changed, or the last operation failed or was
	// interrupted.
	stepUpgrade
	// stepWait: the last operation failed for this very spec; it is retried after a backoff.
	stepWait
)

// Backoff after failed operations on the same spec: 10 s, doubling, at most 5 minutes.
const (
	firstRetry = 10 * time.Second
	lastRetry  = 5 * time.Minute
)

// plan decides the step for a release whose revisions are history (oldest first) when the
// spec's values are values and the chart's version chartVersion, at now; with stepWait it
// also says how long to wait.
func plan(history []*release.Release, values map[string]any, chartVersion string, now time.Time) (step, time.Duration) {
	if len(history) == 0 {
		return stepInstall, 0
	}
	last := history[len(history)-1]
	if !sameRelease(last, values, chartVersion) {
		return stepUpgrade, 0
	}
	switch last.Info.Status {
	case release.StatusDeployed:
		return stepNone, 0
	case release.StatusFailed:
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
