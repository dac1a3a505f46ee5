package etcdcluster

import (
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/status"
)

// clusterLabels are the names of the labels every series has (the EtcdCluster's namespace
// and name), then extra.
func clusterLabels(extra ...string) []string { return append([]string{"namespace", "name"}, extra...) }

// What the operator knows of each cluster, as Prometheus metrics on the manager's /metrics
// (etcd's own metrics, per member, are etcd's: the operator does not repeat them). Labels are
// bounded: the cluster, a member name (at most the cluster's size), a certificate name (four),
// an alarm (two) and versions.
var (
	clusterMembers = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_members",
		Help: "Members of an EtcdCluster by state: desired (spec.size), voting, learner, ready.",
	}, clusterLabels("state"))
	clusterQuorum = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_quorum_available",
		Help: "1 when more than half of an EtcdCluster's voting members are ready, else 0.",
	}, clusterLabels())
	clusterLeader = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_has_leader",
		Help: "1 when the operator's last look found a leader, else 0.",
	}, clusterLabels())
	clusterVersion = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_version_info",
		Help: "Always 1: the version every member runs (current) and the one an upgrade moves to (target, empty when none).",
	}, clusterLabels("current_version", "target_version"))
	memberDBSize = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_member_db_size_bytes",
		Help: "Size of a member's database file, in bytes.",
	}, clusterLabels("member"))
	memberDBSizeInUse = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_member_db_size_in_use_bytes",
		Help: "Part of a member's database holding data, in bytes; the rest is free pages a defragmentation gives back.",
	}, clusterLabels("member"))
	memberLastDefragmentation = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_member_last_defragmentation_timestamp_seconds",
		Help: "When the operator last defragmented a member, in seconds since the epoch.",
	}, clusterLabels("member"))
	certificateExpiry = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_certificate_expiry_timestamp_seconds",
		Help: "When a certificate of an EtcdCluster's TLS expires (peer, server, operator, client), in seconds since the epoch.",
	}, clusterLabels("certificate"))
	backendQuota = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_backend_quota_bytes",
		Help: "The backend quota members run with: --quota-backend-bytes of spec.pod.etcdArgs, else etcd's default 2 GiB; absent without a quota.",
	}, clusterLabels())
	clusterAlarms = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_alarms",
		Help: "Members raising each etcd alarm (nospace: a backend quota is full; corrupt), as the last pass that reached a member read them.",
	}, clusterLabels("alarm"))
	leaderChanges = status.NewCounter(prometheus.CounterOpts{
		Name: "quintet_etcd_cluster_leader_changes_total",
		Help: "Times the operator found an EtcdCluster's leader changed from one member to another.",
	}, "")
)

func init() {
	status.MustRegister(exported, exportedAlarms, leaderChanges)
}

// clusterSamples are the series of c's status. It is pure.
func clusterSamples(c *v1beta2.EtcdCluster) []status.Sample {
	var voting, learners, ready, readyVoting int
	for _, m := range c.Status.Members {
		if m.Learner {
			learners++
		} else {
			voting++
		}
		if m.Ready {
			ready++
			if !m.Learner {
				readyVoting++
			}
		}
	}
	// of is the sample of gauge g for this cluster, with the labels after namespace and name.
	of := func(g *status.Gauge, value float64, labels ...string) status.Sample {
		return status.Sample{Gauge: g, Labels: append([]string{c.Namespace, c.Name}, labels...), Value: value}
	}
	out := []status.Sample{
		of(clusterMembers, float64(c.Spec.Size), "desired"),
		of(clusterMembers, float64(voting), "voting"),
		of(clusterMembers, float64(learners), "learner"),
		of(clusterMembers, float64(ready), "ready"),
		of(clusterQuorum, bit(voting > 0 && readyVoting > voting/2)),
		of(clusterLeader, bit(c.Status.LeaderID != "")),
	}
	if c.Status.CurrentVersion != "" {
		out = append(out, of(clusterVersion, 1, c.Status.CurrentVersion, c.Status.TargetVersion))
	}
	for _, m := range c.Status.Members {
		out = append(out, of(memberDBSize, float64(m.DBSize), m.Name), of(memberDBSizeInUse, float64(m.DBSizeInUse), m.Name))
		if m.LastDefragmentTime != nil {
			out = append(out, of(memberLastDefragmentation, float64(m.LastDefragmentTime.Unix()), m.Name))
		}
	}
	if c.Status.TLS != nil {
		for _, cert := range c.Status.TLS.Certificates {
			out = append(out, of(certificateExpiry, float64(cert.NotAfter.Unix()), cert.Name))
		}
	}
	if quota, ok := quotaBackendBytes(c); ok {
		out = append(out, of(backendQuota, float64(quota)))
	}
	return out
}

// etcdDefaultQuota is etcd's backend quota when --quota-backend-bytes is unset or 0.
const etcdDefaultQuota = 2 << 30

// quotaBackendBytes is the backend quota of c's members, read from spec.pod.etcdArgs as etcd
// reads its flags (the last one counts, as a Go integer); false when it is negative (etcd
// then has none) or no number (etcd does not start).
func quotaBackendBytes(c *v1beta2.EtcdCluster) (int64, bool) {
	quota := int64(0)
	if c.Spec.Pod != nil {
		for _, arg := range c.Spec.Pod.EtcdArgs {
			value, ok := strings.CutPrefix(arg, "--quota-backend-bytes=")
			if !ok {
				continue
			}
			var err error
			if quota, err = strconv.ParseInt(value, 0, 64); err != nil {
				return 0, false
			}
		}
	}
	switch {
	case quota < 0:
		return 0, false
	case quota == 0:
		return etcdDefaultQuota, true
	}
	return quota, true
}

// alarms are the etcd alarms exported, by label value.
var alarms = []struct{ label, etcd string }{{"nospace", "NOSPACE"}, {"corrupt", "CORRUPT"}}

// alarmSamples are the members raising each alarm, as rep read them: none when no member
// answered (the alarms are unknown then). It is pure.
func alarmSamples(c *v1beta2.EtcdCluster, rep membership.Report) []status.Sample {
	if !rep.Observed.Reachable {
		return nil
	}
	out := make([]status.Sample, 0, len(alarms))
	for _, a := range alarms {
		raising := map[uint64]bool{}
		for _, raised := range rep.Alarms {
			if raised.Type == a.etcd {
				raising[raised.MemberID] = true
			}
		}
		out = append(out, status.Sample{Gauge: clusterAlarms, Labels: []string{c.Namespace, c.Name, a.label}, Value: float64(len(raising))})
	}
	return out
}

// leaderWatch remembers the last leader the operator found in each cluster: a pass that read
// a status older than the last pass wrote (the cache lags the patch) counts no change twice,
// and a pass that finds no leader forgets none.
type leaderWatch struct {
	mu   sync.Mutex
	last map[types.NamespacedName]string
}

// changed records the leader a pass found (now; empty: none), its status having said before,
// and says whether it is another member than the last leader found.
func (w *leaderWatch) changed(key types.NamespacedName, before, now string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, known := w.last[key]
	if !known {
		last = before
	}
	if now == "" {
		now = last
	}
	if w.last == nil {
		w.last = map[types.NamespacedName]string{}
	}
	w.last[key] = now
	return last != "" && now != last
}

func (w *leaderWatch) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// exported are each cluster's series: a member removed, a version changed or TLS turned
// off loses its series, and a cluster deleted loses all of them; exportedAlarms are the
// alarms of each cluster, and leaders its last leader.
var (
	exported = status.NewSeries[types.NamespacedName](clusterMembers, clusterQuorum, clusterLeader, clusterVersion,
		memberDBSize, memberDBSizeInUse, memberLastDefragmentation, certificateExpiry, backendQuota)
	exportedAlarms = status.NewSeries[types.NamespacedName](clusterAlarms)
	leaders        leaderWatch
)

// recordClusterMetrics exports c's status, and counts a change of leader from the one its
// status named before the pass (leaderBefore).
func recordClusterMetrics(c *v1beta2.EtcdCluster, leaderBefore string) {
	key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
	exported.Set(key, clusterSamples(c))
	leaderChanges.Start(c.Namespace, c.Name)
	if leaders.changed(key, leaderBefore, c.Status.LeaderID) {
		leaderChanges.Add(c.Namespace, c.Name, 1)
	}
}

// recordAlarms exports the alarms a pass that observed c read.
func recordAlarms(c *v1beta2.EtcdCluster, rep membership.Report) {
	exportedAlarms.Set(types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, alarmSamples(c, rep))
}

// forgetClusterMetrics drops the series of a cluster that is gone.
func forgetClusterMetrics(key types.NamespacedName) {
	exported.Forget(key)
	exportedAlarms.Forget(key)
	leaders.forget(key)
	leaderChanges.Forget(key.Namespace, key.Name)
}
