package etcdcluster

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/shared/status"
	"github.com/quintet-operators/quintet/shared/testenv"
)

func metricsCluster(members ...v1beta2.MemberStatus) *v1beta2.EtcdCluster {
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "metrics"}}
	c.Spec.Size = 3
	c.Status.Members = members
	return c
}

// sampleText writes samples as `metric{labels} value`, in order.
func sampleText(samples []status.Sample) []string {
	out := make([]string, 0, len(samples))
	names := map[any]string{clusterMembers: "members", clusterQuorum: "quorum", clusterLeader: "leader", clusterVersion: "version",
		memberDBSize: "db", memberDBSizeInUse: "inUse", memberLastDefragmentation: "defrag", certificateExpiry: "cert"}
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s%v %g", names[s.Gauge], s.Labels[2:], s.Value))
	}
	return out
}

func TestClusterSamplesSayWhatTheStatusSays(t *testing.T) {
	defragmented := metav1.NewTime(time.Unix(1700000000, 0))
	ready := func(name string) v1beta2.MemberStatus {
		return v1beta2.MemberStatus{Name: name, Ready: true, DBSize: 4096, DBSizeInUse: 1024}
	}
	healthy := metricsCluster(ready("m-0"), ready("m-1"), ready("m-2"))
	healthy.Status.LeaderID, healthy.Status.CurrentVersion, healthy.Status.TargetVersion = "a1", "3.6.7", "3.6.8"
	healthy.Status.Members[1].LastDefragmentTime = &defragmented
	healthy.Status.TLS = &v1beta2.TLSStatus{Certificates: []v1beta2.CertificateStatus{{Name: "peer", NotAfter: defragmented}}}

	oneUp := metricsCluster(ready("m-0"), v1beta2.MemberStatus{Name: "m-1"}, v1beta2.MemberStatus{Name: "m-2"})
	learning := metricsCluster(ready("m-0"), ready("m-1"), v1beta2.MemberStatus{Name: "m-2", Learner: true, Ready: true})

	for _, tt := range []struct {
		name string
		c    *v1beta2.EtcdCluster
		want []string
	}{
		{"healthy, upgrading, TLS", healthy, []string{
			"members[desired] 3", "members[voting] 3", "members[learner] 0", "members[ready] 3", "quorum[] 1", "leader[] 1",
			"version[3.6.7 3.6.8] 1",
			"db[m-0] 4096", "inUse[m-0] 1024", "db[m-1] 4096", "inUse[m-1] 1024", "defrag[m-1] 1.7e+09", "db[m-2] 4096", "inUse[m-2] 1024",
			"cert[peer] 1.7e+09",
		}},
		{"one of three ready: no quorum, no leader", oneUp, []string{
			"members[desired] 3", "members[voting] 3", "members[learner] 0", "members[ready] 1", "quorum[] 0", "leader[] 0",
			"db[m-0] 4096", "inUse[m-0] 1024", "db[m-1] 0", "inUse[m-1] 0", "db[m-2] 0", "inUse[m-2] 0",
		}},
		{"a learner does not count toward the quorum", learning, []string{
			"members[desired] 3", "members[voting] 2", "members[learner] 1", "members[ready] 3", "quorum[] 1", "leader[] 0",
			"db[m-0] 4096", "inUse[m-0] 1024", "db[m-1] 4096", "inUse[m-1] 1024", "db[m-2] 0", "inUse[m-2] 0",
		}},
		{"no members yet", metricsCluster(), []string{
			"members[desired] 3", "members[voting] 0", "members[learner] 0", "members[ready] 0", "quorum[] 0", "leader[] 0",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sampleText(clusterSamples(tt.c)); !slices.Equal(got, tt.want) {
				t.Errorf("samples\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// A member removed loses its series, and so does a cluster deleted.
func TestRecordedClusterMetricsFollowTheStatus(t *testing.T) {
	c := metricsCluster(v1beta2.MemberStatus{Name: "m-0", DBSize: 10}, v1beta2.MemberStatus{Name: "m-1", DBSize: 20})
	recordClusterMetrics(c)
	if got := testutil.ToFloat64(memberDBSize.WithLabelValues("ns", "metrics", "m-1")); got != 20 {
		t.Fatalf("m-1's db size: %v, want 20", got)
	}
	c.Status.Members = c.Status.Members[:1]
	recordClusterMetrics(c)
	if n := seriesOfTheCluster(t, "quintet_etcd_member_db_size_bytes"); n != 1 {
		t.Errorf("after m-1 left: %d db size series, want m-0's alone", n)
	}
	forgetClusterMetrics(types.NamespacedName{Namespace: "ns", Name: "metrics"})
	if n := seriesOfTheCluster(t, "quintet_etcd_member_db_size_bytes") + seriesOfTheCluster(t, "quintet_etcd_cluster_members"); n != 0 {
		t.Errorf("after the cluster went: %d series, want none", n)
	}
}

// seriesOfTheCluster counts the series of the metric name of ns/metrics (the package's
// envtest clusters have theirs too).
func seriesOfTheCluster(t *testing.T, name string) int {
	t.Helper()
	series, err := testenv.Series(name, map[string]string{"namespace": "ns", "name": "metrics"})
	if err != nil {
		t.Fatal(err)
	}
	return len(series)
}
