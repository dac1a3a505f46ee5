package etcdcluster

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/status"
)

// clusterLabels are the names of the labels every series has (the EtcdCluster's namespace
// and name), then extra.
func clusterLabels(extra ...string) []string { return append([]string{"namespace", "name"}, extra...) }

// What the operator knows of each cluster, as Prometheus metrics on the manager's /metrics
// (etcd's own metrics, per member, are etcd's: the operator does not repeat them). Labels are
// bounded: the cluster, a member name (at most the cluster's size), a certificate name (four)
// and versions.
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
	of := func(g *prometheus.GaugeVec, value float64, labels ...string) status.Sample {
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
	return out
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// exported are each cluster's series: a member removed, a version changed or TLS turned
// off loses its series, and a cluster deleted loses all of them.
var exported status.Series[types.NamespacedName]

// recordClusterMetrics exports c's status.
func recordClusterMetrics(c *v1beta2.EtcdCluster) {
	exported.Set(types.NamespacedName{Namespace: c.Namespace, Name: c.Name}, clusterSamples(c))
}

// forgetClusterMetrics drops the series of a cluster that is gone.
func forgetClusterMetrics(key types.NamespacedName) { exported.Forget(key) }
