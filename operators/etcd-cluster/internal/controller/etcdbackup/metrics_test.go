package etcdbackup

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

// metricsBackup is an EtcdBackup of cluster (etcdEndpoints when empty) with policy.
func metricsBackup(cluster string, policy *v1beta2.BackupPolicy) *v1beta2.EtcdBackup {
	b := &v1beta2.EtcdBackup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "metrics"}, Spec: v1beta2.EtcdBackupSpec{
		ClusterName: cluster, StorageType: v1beta2.BackupStorageTypeS3, BackupPolicy: policy}}
	if cluster == "" {
		b.Spec.EtcdEndpoints = []string{"https://etcd.example:2379"}
	}
	return b
}

// backupSampleText writes samples as `metric[labels] value`, in order.
func backupSampleText(samples []status.Sample) []string {
	names := map[any]string{backupLastSuccess: "success", backupLastSize: "size", backupInterval: "interval"}
	out := make([]string, 0, len(samples))
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s%v %g", names[s.Gauge], s.Labels, s.Value))
	}
	return out
}

func TestBackupSamplesSayWhatTheSpecAndStatusSay(t *testing.T) {
	taken := &v1beta2.BackupRecord{Size: 20480, StartTime: metav1.NewTime(time.Unix(1700000000, 0)),
		Duration: metav1.Duration{Duration: 90 * time.Second}}
	withLast := func(b *v1beta2.EtcdBackup) *v1beta2.EtcdBackup { b.Status.LastBackup = taken; return b }
	for _, tt := range []struct {
		name string
		b    *v1beta2.EtcdBackup
		want []string
	}{
		{"a one-shot backup not taken yet", metricsBackup("etcd", nil), []string{}},
		{"a one-shot backup taken: stored 90s after it began", withLast(metricsBackup("etcd", nil)), []string{
			"success[ns metrics etcd] 1.70000009e+09", "size[ns metrics etcd] 20480",
		}},
		{"every 10 minutes, not taken yet", metricsBackup("etcd", &v1beta2.BackupPolicy{BackupIntervalInSecond: 600}), []string{
			"interval[ns metrics etcd] 600",
		}},
		{"on weekdays, of endpoints: no cluster", withLast(metricsBackup("", &v1beta2.BackupPolicy{Schedule: "0 3 * * 1-5"})), []string{
			"success[ns metrics ] 1.70000009e+09", "size[ns metrics ] 20480", "interval[ns metrics ] 259200",
		}},
		{"a schedule that does not parse: no interval", metricsBackup("etcd", &v1beta2.BackupPolicy{Schedule: "61 * * * *"}), []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := backupSampleText(backupSamples(tt.b)); !slices.Equal(got, tt.want) {
				t.Errorf("samples\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// Failures are counted per EtcdBackup, from 0; a new cluster starts a new counter, and an
// EtcdBackup deleted loses its series.
func TestBackupFailuresAreCountedWithTheBackupsLabels(t *testing.T) {
	b := metricsBackup("etcd", &v1beta2.BackupPolicy{BackupIntervalInSecond: 600})
	recordBackupMetrics(b)
	counter := func(cluster string) float64 {
		return testutil.ToFloat64(backupFailures.WithLabelValues("ns", "metrics", cluster))
	}
	if got := counter("etcd"); got != 0 {
		t.Fatalf("before any failure: %g, want 0", got)
	}
	countFailure(b)
	countFailure(b)
	if got := counter("etcd"); got != 2 {
		t.Fatalf("after two failures: %g, want 2", got)
	}
	b.Spec.ClusterName = "other"
	countFailure(b)
	if got := series(t, "quintet_etcd_backup_failures_total"); !slices.Equal(got, []string{"other 1"}) {
		t.Errorf("after the cluster changed: %v, want other's alone", got)
	}
	forgetBackupMetrics(types.NamespacedName{Namespace: "ns", Name: "metrics"})
	for _, name := range []string{"quintet_etcd_backup_failures_total", "quintet_etcd_backup_schedule_interval_seconds"} {
		if got := series(t, name); len(got) != 0 {
			t.Errorf("after the EtcdBackup went: %s %v, want none", name, got)
		}
	}
}

// series are the series of the metric name of ns/metrics, as `cluster value` (the package's
// envtest backups have theirs too).
func series(t *testing.T, name string) []string {
	t.Helper()
	samples, err := testenv.Series(name, map[string]string{"namespace": "ns", "name": "metrics"})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(samples))
	for _, s := range samples {
		out = append(out, fmt.Sprintf("%s %g", s.Labels["cluster"], s.Value))
	}
	return out
}
