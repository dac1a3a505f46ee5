package etcdcluster

import (
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// What the operator knows of each cluster, as Prometheus metrics on the manager's /metrics
// (etcd's own metrics, per member, are etcd's: the operator does not repeat them). Labels are
// bounded: the cluster, a member name (at most the cluster's size), a certificate name (four)
// and versions.
// clusterLabels are the EtcdCluster's namespace and name, which every series has, then extra.
func clusterLabels(extra ...string) []string { return append([]string{"namespace", "name"}, extra...) }

var (
	clusterMembers = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_members",
		Help: "Members of an EtcdCluster by state: desired (spec.size), voting, learner, ready.",
	}, clusterLabels("state"))
	clusterQuorum = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_quorum_available",
		Help: "1 when more than half of an EtcdCluster's voting members are ready, else 0.",
	}, clusterLabels())
	clusterLeader = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_has_leader",
		Help: "1 when the operator's last look found a leader, else 0.",
	}, clusterLabels())
	clusterVersion = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_version_info",
		Help: "Always 1: the version every member runs (current) and the one an upgrade moves to (target, empty when none).",
	}, clusterLabels("current_version", "target_version"))
	memberDBSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_member_db_size_bytes",
		Help: "Size of a member's database file, in bytes.",
	}, clusterLabels("member"))
	memberDBSizeInUse = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_member_db_size_in_use_bytes",
		Help: "Part of a member's database holding data, in bytes; the rest is free pages a defragmentation gives back.",
	}, clusterLabels("member"))
	memberLastDefragmentation = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_member_last_defragmentation_timestamp_seconds",
		Help: "When the operator last defragmented a member, in seconds since the epoch.",
	}, clusterLabels("member"))
	certificateExpiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "quintet_etcd_cluster_certificate_expiry_timestamp_seconds",
		Help: "When a certificate of an EtcdCluster's TLS expires (peer, server, operator, client), in seconds since the epoch.",
	}, clusterLabels("certificate"))
)

func init() {
	ctrlmetrics.Registry.MustRegister(clusterMembers, clusterQuorum, clusterLeader, clusterVersion,
		memberDBSize, memberDBSizeInUse, memberLastDefragmentation, certificateExpiry)
}

// sample is one series' value.
type sample struct {
	vec    *prometheus.GaugeVec
	labels []string
	value  float64
}

// clusterSamples are the series of c's status. It is pure.
func clusterSamples(c *v1beta2.EtcdCluster) []sample {
	ns, name := c.Namespace, c.Name
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
	out := []sample{
		{clusterMembers, []string{ns, name, "desired"}, float64(c.Spec.Size)},
		{clusterMembers, []string{ns, name, "voting"}, float64(voting)},
		{clusterMembers, []string{ns, name, "learner"}, float64(learners)},
		{clusterMembers, []string{ns, name, "ready"}, float64(ready)},
		{clusterQuorum, []string{ns, name}, bit(voting > 0 && readyVoting > voting/2)},
		{clusterLeader, []string{ns, name}, bit(c.Status.LeaderID != "")},
	}
	if c.Status.CurrentVersion != "" {
		out = append(out, sample{clusterVersion, []string{ns, name, c.Status.CurrentVersion, c.Status.TargetVersion}, 1})
	}
	for _, m := range c.Status.Members {
		out = append(out,
			sample{memberDBSize, []string{ns, name, m.Name}, float64(m.DBSize)},
			sample{memberDBSizeInUse, []string{ns, name, m.Name}, float64(m.DBSizeInUse)})
		if m.LastDefragmentTime != nil {
			out = append(out, sample{memberLastDefragmentation, []string{ns, name, m.Name}, float64(m.LastDefragmentTime.Unix())})
		}
	}
	if c.Status.TLS != nil {
		for _, cert := range c.Status.TLS.Certificates {
			out = append(out, sample{certificateExpiry, []string{ns, name, cert.Name}, float64(cert.NotAfter.Unix())})
		}
	}
	return out
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// exported remembers each cluster's series, so that a member removed, a version changed or
// TLS turned off loses its series, and a cluster deleted loses all of them.
var exported = struct {
	sync.Mutex
	samples map[types.NamespacedName][]sample
}{samples: map[types.NamespacedName][]sample{}}

// recordClusterMetrics exports c's status.
func recordClusterMetrics(c *v1beta2.EtcdCluster) {
	key := types.NamespacedName{Namespace: c.Namespace, Name: c.Name}
	now := clusterSamples(c)
	for _, s := range now {
		s.vec.WithLabelValues(s.labels...).Set(s.value)
	}
	exported.Lock()
	defer exported.Unlock()
	for _, old := range exported.samples[key] {
		if !slices.ContainsFunc(now, old.sameSeries) {
			old.vec.DeleteLabelValues(old.labels...)
		}
	}
	exported.samples[key] = now
}

// forgetClusterMetrics drops the series of a cluster that is gone.
func forgetClusterMetrics(key types.NamespacedName) {
	exported.Lock()
	defer exported.Unlock()
	for _, old := range exported.samples[key] {
		old.vec.DeleteLabelValues(old.labels...)
	}
	delete(exported.samples, key)
}

func (s sample) sameSeries(o sample) bool {
	return s.vec == o.vec && strings.Join(s.labels, "\x00") == strings.Join(o.labels, "\x00")
}
