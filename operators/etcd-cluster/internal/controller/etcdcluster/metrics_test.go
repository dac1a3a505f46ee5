package etcdcluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/conditions"
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
		memberDBSize: "db", memberDBSizeInUse: "inUse", memberLastDefragmentation: "defrag", certificateExpiry: "cert",
		backendQuota: "quota", clusterAlarms: "alarms"}
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
	healthy.Spec.Pod = &v1beta2.PodPolicy{EtcdArgs: []string{"--quota-backend-bytes=4294967296"}}

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
			"cert[peer] 1.7e+09", "quota[] 4.294967296e+09",
		}},
		{"one of three ready: no quorum, no leader", oneUp, []string{
			"members[desired] 3", "members[voting] 3", "members[learner] 0", "members[ready] 1", "quorum[] 0", "leader[] 0",
			"db[m-0] 4096", "inUse[m-0] 1024", "db[m-1] 0", "inUse[m-1] 0", "db[m-2] 0", "inUse[m-2] 0", "quota[] 2.147483648e+09",
		}},
		{"a learner does not count toward the quorum", learning, []string{
			"members[desired] 3", "members[voting] 2", "members[learner] 1", "members[ready] 3", "quorum[] 1", "leader[] 0",
			"db[m-0] 4096", "inUse[m-0] 1024", "db[m-1] 4096", "inUse[m-1] 1024", "db[m-2] 0", "inUse[m-2] 0", "quota[] 2.147483648e+09",
		}},
		{"no members yet", metricsCluster(), []string{
			"members[desired] 3", "members[voting] 0", "members[learner] 0", "members[ready] 0", "quorum[] 0", "leader[] 0",
			"quota[] 2.147483648e+09",
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
	recordClusterMetrics(c, "")
	if got, _ := exported.Value(memberDBSize, "ns", "metrics", "m-1"); got != 20 {
		t.Fatalf("m-1's db size: %v, want 20", got)
	}
	c.Status.Members = c.Status.Members[:1]
	recordClusterMetrics(c, "")
	if n := seriesOfTheCluster(t, "quintet_etcd_member_db_size_bytes"); n != 1 {
		t.Errorf("after m-1 left: %d db size series, want m-0's alone", n)
	}
	recordAlarms(c, membership.Report{Observed: membership.Observed{Reachable: true}})
	forgetClusterMetrics(types.NamespacedName{Namespace: "ns", Name: "metrics"})
	n := 0
	for _, name := range []string{"quintet_etcd_member_db_size_bytes", "quintet_etcd_cluster_members", "quintet_etcd_cluster_alarms",
		"quintet_etcd_cluster_leader_changes_total", "quintet_etcd_cluster_backend_quota_bytes"} {
		n += seriesOfTheCluster(t, name)
	}
	if n != 0 {
		t.Errorf("after the cluster went: %d series, want none", n)
	}
}

func TestQuotaBackendBytesIsTheQuotaEtcdRunsWith(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want float64 // 0: no series
	}{
		{"no flag: etcd's default", nil, 2 << 30},
		{"other flags", []string{"--auto-compaction-retention=10m"}, 2 << 30},
		{"a quota", []string{"--quota-backend-bytes=4294967296"}, 4 << 30},
		{"0: etcd's default", []string{"--quota-backend-bytes=0"}, 2 << 30},
		{"the last flag counts", []string{"--quota-backend-bytes=1024", "--quota-backend-bytes=8589934592"}, 8 << 30},
		{"as a Go integer", []string{"--quota-backend-bytes=0x100000000"}, 4 << 30},
		{"negative: no quota", []string{"--quota-backend-bytes=-1"}, 0},
		{"no number: etcd does not start", []string{"--quota-backend-bytes=4G"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := metricsCluster()
			c.Spec.Pod = &v1beta2.PodPolicy{EtcdArgs: tt.args}
			got := 0.0
			for _, s := range clusterSamples(c) {
				if s.Gauge == backendQuota {
					got = s.Value
				}
			}
			if got != tt.want {
				t.Errorf("quota %g, want %g", got, tt.want)
			}
		})
	}
}

func TestAlarmSamplesCountTheMembersRaisingEachAlarm(t *testing.T) {
	c := metricsCluster()
	reached := func(alarms ...etcd.Alarm) membership.Report {
		return membership.Report{Observed: membership.Observed{Reachable: true}, Alarms: alarms}
	}
	for _, tt := range []struct {
		name string
		rep  membership.Report
		want []string
	}{
		{"no member answers: unknown", membership.Report{Alarms: []etcd.Alarm{{MemberID: 1, Type: "NOSPACE"}}}, []string{}},
		{"none", reached(), []string{"alarms[nospace] 0", "alarms[corrupt] 0"}},
		{"two members out of space, one corrupt", reached(
			etcd.Alarm{MemberID: 1, Type: "NOSPACE"}, etcd.Alarm{MemberID: 2, Type: "NOSPACE"}, etcd.Alarm{MemberID: 1, Type: "NOSPACE"},
			etcd.Alarm{MemberID: 3, Type: "CORRUPT"}, etcd.Alarm{MemberID: 3, Type: "SOMETHING_NEW"},
		), []string{"alarms[nospace] 2", "alarms[corrupt] 1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := sampleText(alarmSamples(c, tt.rep)); !slices.Equal(got, tt.want) {
				t.Errorf("samples %v, want %v", got, tt.want)
			}
		})
	}
}

// A leader change counts once, from one member to another, whatever status a pass started
// from; a pass that finds no leader changes nothing.
func TestLeaderChangesAreCountedFromOneMemberToAnother(t *testing.T) {
	c := metricsCluster()
	c.Name = "leaders"
	changes := func() float64 { return leaderChanges.Value("ns", "leaders") }
	for i, pass := range []struct {
		before, now string
		want        float64
	}{
		{"", "", 0},
		{"", "a1", 0},   // the first leader
		{"a1", "a1", 0}, // the same
		{"a1", "b2", 1}, // another
		{"a1", "b2", 1}, // a status read before the last pass's patch: counted already
		{"b2", "", 1},   // no member answers
		{"", "c3", 2},   // after the outage, another than b2
		{"c3", "c3", 2},
	} {
		c.Status.LeaderID = pass.now
		recordClusterMetrics(c, pass.before)
		if got := changes(); got != pass.want {
			t.Fatalf("pass %d (%q then %q): %g changes, want %g", i, pass.before, pass.now, got, pass.want)
		}
	}
	forgetClusterMetrics(types.NamespacedName{Namespace: "ns", Name: "leaders"})
	if n := seriesOf(t, "quintet_etcd_cluster_leader_changes_total", "leaders"); n != 0 {
		t.Errorf("after the cluster went: %d series", n)
	}
	// A manager that starts (or takes over) compares the first leader it finds with the status's.
	c.Name = "metrics"
	c.Status.LeaderID = "b2"
	recordClusterMetrics(c, "a1")
	if got := leaderChanges.Value("ns", "metrics"); got != 1 {
		t.Errorf("a new manager finding b2 where the status said a1: %g changes, want 1", got)
	}
	forgetClusterMetrics(types.NamespacedName{Namespace: "ns", Name: "metrics"})
}

// The alarm a member raises, as etcd lists it, is exported by the passes that read it, beside
// the quota the spec gives; the cluster's series go with the cluster.
func TestEtcdClusterExportsTheAlarmsItsMembersRaise(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	c := &v1beta2.EtcdCluster{ObjectMeta: metav1.ObjectMeta{Name: "alarmed", Namespace: ns}, Spec: v1beta2.EtcdClusterSpec{Size: 1,
		Pod: &v1beta2.PodPolicy{EtcdArgs: []string{"--quota-backend-bytes=4294967296"}}}}
	runLoopbackMember(t, c)
	raiseAlarm(t, testAddresses(c).ClientURL(0), pb.AlarmType_NOSPACE)
	memberClaim(t, ns, c.Name, 0, "")
	g.Expect(env.Client.Create(ctx, c)).To(Succeed())

	// values are the values of the metric name's series of c with the labels more.
	values := func(g Gomega, name string, more ...string) []float64 {
		match := map[string]string{"namespace": ns, "name": c.Name}
		for i := 0; i+1 < len(more); i += 2 {
			match[more[i]] = more[i+1]
		}
		series, err := testenv.Series(name, match)
		g.Expect(err).NotTo(HaveOccurred())
		out := make([]float64, 0, len(series))
		for _, s := range series {
			out = append(out, s.Value)
		}
		return out
	}
	g.Eventually(func(g Gomega) {
		get(g, c)
		d := conditions.Get(c, conditions.DegradedCondition)
		g.Expect(d).NotTo(BeNil())
		g.Expect(d.Reason).To(Equal(v1beta2.ReasonNoSpace), d.Message)
		g.Expect(values(g, "quintet_etcd_cluster_alarms", "alarm", "nospace")).To(Equal([]float64{1}))
	}, timeout, tick).Should(Succeed())
	g.Expect(values(g, "quintet_etcd_cluster_alarms", "alarm", "corrupt")).To(Equal([]float64{0}))
	g.Expect(values(g, "quintet_etcd_cluster_backend_quota_bytes")).To(Equal([]float64{4 << 30}))
	g.Expect(values(g, "quintet_etcd_cluster_has_leader")).To(Equal([]float64{1}))
	g.Expect(values(g, "quintet_etcd_cluster_leader_changes_total")).To(Equal([]float64{0}))

	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, name := range []string{"quintet_etcd_cluster_alarms", "quintet_etcd_cluster_backend_quota_bytes",
			"quintet_etcd_cluster_has_leader", "quintet_etcd_cluster_leader_changes_total"} {
			g.Expect(values(g, name)).To(BeEmpty(), name)
		}
	}, timeout, tick).Should(Succeed())
}

// raiseAlarm raises alarm on the member at url, as etcd does when its quota is full.
func raiseAlarm(t *testing.T, url string, alarm pb.AlarmType) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	st, err := c.Status(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pb.NewMaintenanceClient(c.ActiveConnection()).Alarm(t.Context(),
		&pb.AlarmRequest{Action: pb.AlarmRequest_ACTIVATE, MemberID: st.Header.MemberId, Alarm: alarm})
	if err != nil {
		t.Fatal(err)
	}
}

// seriesOfTheCluster counts the series of the metric name of ns/metrics (the package's
// envtest clusters have theirs too).
func seriesOfTheCluster(t *testing.T, name string) int {
	t.Helper()
	return seriesOf(t, name, "metrics")
}

// seriesOf counts the series of the metric name of the cluster ns/cluster.
func seriesOf(t *testing.T, name, cluster string) int {
	t.Helper()
	series, err := testenv.Series(name, map[string]string{"namespace": "ns", "name": cluster})
	if err != nil {
		t.Fatal(err)
	}
	return len(series)
}
