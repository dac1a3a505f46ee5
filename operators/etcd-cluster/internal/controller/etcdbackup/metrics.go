package etcdbackup

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/shared/status"
)

// backupLabels are the labels of every series: the EtcdBackup's namespace and name, and the
// EtcdCluster it backs up (spec.clusterName; empty for etcdEndpoints, which are no label).
var backupLabels = []string{"namespace", "name", "cluster"}

// What the operator knows of each EtcdBackup, as Prometheus metrics on the manager's
// /metrics: enough to alert on a backup that is late (time() - last success > 2 * interval)
// or failing.
var (
	backupLastSuccess = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_backup_last_success_timestamp_seconds",
		Help: "When the last successful backup of an EtcdBackup was stored (its start and duration), in seconds since the epoch.",
	}, backupLabels)
	backupLastSize = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_backup_last_size_bytes",
		Help: "Size of the last successful backup of an EtcdBackup, as stored, in bytes.",
	}, backupLabels)
	backupInterval = status.NewGauge(prometheus.GaugeOpts{
		Name: "quintet_etcd_backup_schedule_interval_seconds",
		Help: "Longest time between two backups of a periodic EtcdBackup: its interval, or the longest gap between consecutive firings of its schedule.",
	}, backupLabels)
	backupFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quintet_etcd_backup_failures_total",
		Help: "Backups of an EtcdBackup that failed: taking or storing the snapshot, verifying it, or its Job (one per Warning Event of a failed backup).",
	}, backupLabels)
)

func init() {
	status.MustRegister(exported)
	ctrlmetrics.Registry.MustRegister(backupFailures)
}

// labelValues are the values of backupLabels for b.
func labelValues(b *v1beta2.EtcdBackup) []string {
	return []string{b.Namespace, b.Name, b.Spec.ClusterName}
}

// backupSamples are the series of b's spec and status. It is pure.
func backupSamples(b *v1beta2.EtcdBackup) []status.Sample {
	var out []status.Sample
	of := func(g *status.Gauge, value float64) status.Sample {
		return status.Sample{Gauge: g, Labels: labelValues(b), Value: value}
	}
	if last := b.Status.LastBackup; last != nil {
		stored := last.StartTime.Add(last.Duration.Duration)
		out = append(out, of(backupLastSuccess, float64(stored.Unix())), of(backupLastSize, float64(last.Size)))
	}
	if interval, ok := backup.Interval(b.Spec.BackupPolicy); ok {
		out = append(out, of(backupInterval, interval.Seconds()))
	}
	return out
}

// exported are each EtcdBackup's gauges: a backup made one-shot loses its interval, and an
// EtcdBackup deleted loses all of them.
var exported = status.NewSeries[types.NamespacedName](backupLastSuccess, backupLastSize, backupInterval)

// failureCounters remembers the labels of each EtcdBackup's failure counter, to drop it
// with the EtcdBackup, or when the cluster it names changes.
type failureCounters struct {
	mu     sync.Mutex
	labels map[types.NamespacedName][]string
}

// of is b's failure counter, made at 0 the first time.
func (f *failureCounters) of(b *v1beta2.EtcdBackup) prometheus.Counter {
	key, labels := types.NamespacedName{Namespace: b.Namespace, Name: b.Name}, labelValues(b)
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.labels[key]; ok && !slices.Equal(old, labels) {
		backupFailures.DeleteLabelValues(old...)
	}
	if f.labels == nil {
		f.labels = map[types.NamespacedName][]string{}
	}
	f.labels[key] = labels
	return backupFailures.WithLabelValues(labels...)
}

// forget drops the counter of an EtcdBackup that is gone.
func (f *failureCounters) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.labels[key]; ok {
		backupFailures.DeleteLabelValues(old...)
		delete(f.labels, key)
	}
}

var failures failureCounters

// recordBackupMetrics exports b's spec and status; its failure counter starts at 0.
func recordBackupMetrics(b *v1beta2.EtcdBackup) {
	exported.Set(types.NamespacedName{Namespace: b.Namespace, Name: b.Name}, backupSamples(b))
	failures.of(b)
}

// countFailure counts a failed backup of b.
func countFailure(b *v1beta2.EtcdBackup) { failures.of(b).Inc() }

// forgetBackupMetrics drops the series of an EtcdBackup that is gone.
func forgetBackupMetrics(key types.NamespacedName) {
	exported.Forget(key)
	failures.forget(key)
}
