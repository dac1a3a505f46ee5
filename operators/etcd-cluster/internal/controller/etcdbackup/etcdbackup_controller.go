// Package etcdbackup runs EtcdBackups: snapshots of an EtcdCluster (or of other etcd
// endpoints) into an S3-compatible store, once or periodically, with retention.
//
// The manager takes each backup itself, streaming the snapshot from a member to the store in
// parts (backup.PartSize), so its memory does not grow with the database; a backup runs in a
// pass of its own, after one that marks it Progressing.
package etcdbackup

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/certs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/scope"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/status"
)

// Reconciler takes the backups of EtcdBackups.
type Reconciler struct {
	client.Client
	// APIReader reads Secrets, which the manager's cache holds only when labelled for a
	// cluster.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// ClusterWide: as the EtcdCluster reconciler's, the CoreOS scope annotation decides
	// which manager takes an EtcdBackup.
	ClusterWide bool
	// DialTimeout bounds connecting to members; etcd.DefaultDialTimeout when zero.
	DialTimeout time.Duration
	// OperatorImage is the manager's own image, which backup Jobs run (etcd-snapshot
	// backup-to-volume) for backups to a PersistentVolumeClaim.
	OperatorImage string
	// EtcdEndpoints are the etcdEndpoints hosts, besides the EtcdClusters of a backup's own
	// namespace, the operator lets backups reach (none by default).
	EtcdEndpoints backup.Allowlist
	// S3 is where the manager may connect for a backup's store.
	S3 backup.Reach
}

// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdbackups,verbs=get;list;watch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdbackups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile takes b's backup when it is due and reports it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	b := &v1beta2.EtcdBackup{}
	if err := r.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			forgetBackupMetrics(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !scope.Manages(b, r.ClusterWide) || !b.DeletionTimestamp.IsZero() {
		// Another operator's, or going away: its backups stay in the store.
		return ctrl.Result{}, nil
	}
	patcher := status.NewPatcher(b)
	defer func() {
		res, reterr = patcher.Finish(ctx, r.Client, b, res, reterr)
		recordBackupMetrics(b)
	}()
	return r.reconcileNormal(ctx, b, time.Now())
}

func (r *Reconciler) reconcileNormal(ctx context.Context, b *v1beta2.EtcdBackup, now time.Time) (ctrl.Result, error) {
	if err := r.deleteRecordedJobs(ctx, b); err != nil {
		return ctrl.Result{}, err
	}
	if b.Status.Verifying != nil {
		if done, err := r.verifyBackup(ctx, b, now); err != nil || !done {
			return ctrl.Result{RequeueAfter: jobPoll}, err // the Job's events come sooner
		}
		return waitForNext(b), nil
	}
	due, ok, err := backup.Due(b)
	switch {
	case err != nil: // a schedule that does not parse: waits for a new spec
		setFailed(b, err, now)
		return ctrl.Result{}, nil
	case !ok: // a one-shot backup, taken
		setWaiting(b, nil)
		return ctrl.Result{}, nil
	case now.Before(due):
		setWaiting(b, &due)
		return ctrl.Result{RequeueAfter: due.Sub(now)}, nil
	}
	starting, err := r.clusterStarting(ctx, b)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case starting:
		setWaitingForCluster(b)
		return ctrl.Result{RequeueAfter: clusterStartingPoll}, nil
	}
	if c := conditions.Get(b, conditions.ProgressingCondition); c == nil || c.Reason != v1beta2.ReasonBackingUp {
		setBackingUp(b)
		return ctrl.Result{RequeueAfter: time.Millisecond}, nil // the backup takes the next pass
	}
	if current, err := r.current(ctx, b); err != nil || !current {
		return ctrl.Result{RequeueAfter: time.Second}, err // the cache's next version starts a pass sooner
	}
	if done, err := r.backUp(ctx, b, due, now); err != nil || !done {
		return ctrl.Result{RequeueAfter: jobPoll}, err // a Job under way: its events come sooner
	}
	return waitForNext(b), nil
}

// waitForNext records when b's next backup is due, once one is over, and waits for it.
func waitForNext(b *v1beta2.EtcdBackup) ctrl.Result {
	next, ok, err := backup.Due(b)
	if err != nil || !ok {
		setWaiting(b, nil)
		return ctrl.Result{}
	}
	setWaiting(b, &next)
	return ctrl.Result{RequeueAfter: max(time.Until(next), time.Millisecond)}
}

// current says whether b, as read from the cache, is the EtcdBackup the API server holds. A
// backup is taken outside the cluster and must be taken once: a cache that has not yet seen
// the status written by the pass that took the last one still says BackingUp, and would take
// it again.
func (r *Reconciler) current(ctx context.Context, b *v1beta2.EtcdBackup) (bool, error) {
	live := &v1beta2.EtcdBackup{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(b), live); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return live.ResourceVersion == b.ResourceVersion, nil
}

// clusterStartingPoll is how often a first backup looks whether its cluster is Available.
const clusterStartingPoll = 5 * time.Second

// clusterStarting says whether b's first backup should wait for its cluster, which exists
// and has never been backed up, to become Available: a new cluster (no members yet) is no
// failure. A cluster that had members is backed up as it is, even without a quorum: the
// first step of recovering it.
func (r *Reconciler) clusterStarting(ctx context.Context, b *v1beta2.EtcdBackup) (bool, error) {
	if b.Spec.ClusterName == "" || b.Status.LastBackup != nil || b.Status.LastFailure != nil {
		return false, nil
	}
	c := &v1beta2.EtcdCluster{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.ClusterName}, c); err != nil {
		return false, client.IgnoreNotFound(err) // no cluster: the backup says so
	}
	return len(c.Status.Members) == 0 && !conditions.IsTrue(c, v1beta2.AvailableCondition), nil
}

// backUp takes one backup, records it (status, Event, log line) and prunes what retention no
// longer keeps, in the same store: in this pass for S3, in a Job for a volume, over several
// passes. It says whether the backup is over.
func (r *Reconciler) backUp(ctx context.Context, b *v1beta2.EtcdBackup, due, now time.Time) (bool, error) {
	if b.Spec.StorageType == v1beta2.BackupStorageTypePVC {
		return r.backUpToVolume(ctx, b, due, now)
	}
	store, err := r.store(ctx, b)
	var record v1beta2.BackupRecord
	if err == nil {
		record, err = r.take(ctx, b, store, now)
	}
	if err == nil && b.Spec.Verify {
		r.startVerification(ctx, b, record)
		return false, nil
	}
	r.recordBackup(ctx, b, record, err, now)
	if err == nil {
		r.prune(ctx, b, store, record, now)
	}
	return true, nil
}

// recordBackup records a backup taken, or failed (err): status, Event, log line.
func (r *Reconciler) recordBackup(ctx context.Context, b *v1beta2.EtcdBackup, record v1beta2.BackupRecord, err error, now time.Time) {
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Backup failed")
		r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, backup.ReasonOf(err), "Backup", "Backup failed: %s", err)
		countFailure(b)
		setFailed(b, err, now)
		return
	}
	ctrl.LoggerFrom(ctx).Info("Backed up", "path", record.Path, "member", record.Member, "revision", record.EtcdRevision,
		"bytes", record.Size, "duration", record.Duration.Duration)
	r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, v1beta2.ReasonBackupSucceeded, "Backup", "Backed up revision %d of %s to %s: %d bytes, sha256 %s, in %s",
		record.EtcdRevision, record.Member, record.Path, record.Size, record.SHA256, record.Duration.Duration)
	setSucceeded(b, record)
}

// take takes one backup into store, bounded by the policy's timeout.
func (r *Reconciler) take(ctx context.Context, b *v1beta2.EtcdBackup, store backup.Objects, now time.Time) (v1beta2.BackupRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, backup.Timeout(b.Spec.BackupPolicy))
	defer cancel()
	target, err := r.target(ctx, b)
	if err != nil {
		return v1beta2.BackupRecord{}, err
	}
	_, key := backup.SplitPath(b.Spec.S3.Path)
	record, err := backup.Take(ctx, target, store, func(revision int64) string {
		if backup.Periodic(b.Spec.BackupPolicy) {
			return backup.PeriodicKey(key, revision, now)
		}
		return key
	})
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w (backupPolicy.timeoutInSecond: %s)", err, backup.Timeout(b.Spec.BackupPolicy))
	}
	return record, err
}

// endpoints are the client URLs of the cluster b backs up, and the Secret of the client
// certificate to reach it with (empty: plain HTTP): an EtcdCluster of b's namespace, named
// by clusterName or by etcdEndpoints, is reached at the addresses the operator gives its
// members, with the operator's client certificate unless b names its own; etcdEndpoints
// that name no such cluster are dialled as written only where the operator allows them.
func (r *Reconciler) endpoints(ctx context.Context, b *v1beta2.EtcdBackup) (endpoints []string, tlsSecret string, confined bool, err error) {
	name := b.Spec.ClusterName
	if name == "" {
		if name, err = r.clusterNamedBy(ctx, b); err != nil || name == "" {
			return b.Spec.EtcdEndpoints, b.Spec.ClientTLSSecret, false, err
		}
		tlsSecret = b.Spec.ClientTLSSecret
	}
	c := &v1beta2.EtcdCluster{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: name}, c); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", false, &backup.Error{Reason: v1beta2.ReasonClusterNotFound, Err: fmt.Errorf("no EtcdCluster %q in namespace %s", name, b.Namespace)}
		}
		return nil, "", false, backup.ReadFailed(err)
	}
	addr := etcdcluster.DNSAddresses(c)
	for i := range max(c.Spec.Size, c.Status.Size) {
		endpoints = append(endpoints, addr.ClientURL(int(i)))
	}
	if tlsSecret == "" && c.Status.TLS != nil {
		tlsSecret = c.Status.TLS.Secret
	}
	return endpoints, tlsSecret, true, nil
}

// clusterNamedBy is the EtcdCluster of b's namespace that b's etcdEndpoints name, or ""
// when the operator allows every one of them as written (--backup-etcd-endpoints). Any
// other endpoint (another namespace's cluster, an address) is refused, and so are entries
// that mix clusters: the manager's network position must not stand in for rights b's
// author lacks.
func (r *Reconciler) clusterNamedBy(ctx context.Context, b *v1beta2.EtcdBackup) (string, error) {
	clusters := &v1beta2.EtcdClusterList{}
	if err := r.List(ctx, clusters, client.InNamespace(b.Namespace)); err != nil {
		return "", backup.ReadFailed(err)
	}
	targets := map[string]bool{} // the cluster each entry names; "" for one the operator allows
	for _, e := range b.Spec.EtcdEndpoints {
		host := ""
		if u, err := url.Parse(e); err == nil {
			host = u.Hostname()
		}
		switch i := slices.IndexFunc(clusters.Items, func(c v1beta2.EtcdCluster) bool { return etcdcluster.NamedBy(&c, host) }); {
		case i >= 0:
			targets[clusters.Items[i].Name] = true
		case r.EtcdEndpoints.AllowsHost(host):
			targets[""] = true
		default:
			return "", endpointNotAllowed(fmt.Sprintf("etcdEndpoints entry %s names no EtcdCluster of namespace %s", e, b.Namespace))
		}
	}
	if len(targets) > 1 {
		return "", endpointNotAllowed("etcdEndpoints name more than one cluster")
	}
	for name := range targets {
		return name, nil
	}
	return "", nil
}

// endpointNotAllowed is the error of etcdEndpoints the backup may not reach.
func endpointNotAllowed(what string) error {
	return &backup.Error{Reason: v1beta2.ReasonEndpointNotAllowed, Err: fmt.Errorf("%s: a backup reaches only the EtcdClusters of its own namespace, "+
		"and other endpoints only where the operator lists their host (--backup-etcd-endpoints); nothing was connected to", what)}
}

// target is the cluster b backs up, with the client certificate to reach it.
func (r *Reconciler) target(ctx context.Context, b *v1beta2.EtcdBackup) (backup.Target, error) {
	t := backup.Target{DialTimeout: r.DialTimeout, Keyspace: b.Spec.Verify}
	if t.DialTimeout == 0 {
		t.DialTimeout = etcd.DefaultDialTimeout
	}
	var tlsSecret string
	var err error
	if t.Endpoints, tlsSecret, t.Confined, err = r.endpoints(ctx, b); err != nil || tlsSecret == "" {
		return t, err
	}
	data, err := backup.SecretData(ctx, r.APIReader, b.Namespace, tlsSecret)
	if err != nil {
		return t, err
	}
	// The cluster's Secret holds the operator's client certificate in the CoreOS client
	// layout, as clientTLSSecret does.
	pair, err := certs.ClientLayout.Read(tlsSecret, data)
	if err == nil {
		t.TLS, err = certs.ClientConfig(pair)
	}
	if err != nil {
		return t, &backup.Error{Reason: v1beta2.ReasonCredentialsInvalid, Err: err}
	}
	return t, nil
}

// store is the bucket of b's s3.path, with the credentials of its awsSecret.
func (r *Reconciler) store(ctx context.Context, b *v1beta2.EtcdBackup) (*backup.Store, error) {
	return backup.OpenStore(ctx, r.APIReader, b.Namespace, b.Spec.S3, r.S3)
}

// prune deletes the periodic backups retention no longer keeps. A failure is reported and
// retried after the next backup; it does not fail this one.
func (r *Reconciler) prune(ctx context.Context, b *v1beta2.EtcdBackup, store backup.Objects, taken v1beta2.BackupRecord, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, backup.Timeout(b.Spec.BackupPolicy))
	defer cancel()
	_, key := backup.SplitPath(b.Spec.S3.Path)
	_, takenKey := backup.SplitPath(taken.Path)
	deleted, err := backup.Prune(ctx, store, key, takenKey, b.Spec.BackupPolicy, now)
	r.recordPruned(ctx, b, store, deleted, err)
}

// recordPruned reports what retention deleted, and what it could not.
func (r *Reconciler) recordPruned(ctx context.Context, b *v1beta2.EtcdBackup, store backup.Objects, deleted []string, err error) {
	for _, k := range deleted {
		r.Recorder.Eventf(b, nil, corev1.EventTypeNormal, "Pruned", "Prune", "Deleted backup %s (retention)", store.Path(k))
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Pruning old backups failed")
		r.Recorder.Eventf(b, nil, corev1.EventTypeWarning, "PruneFailed", "Prune", "Deleting backups beyond retention failed: %s", err)
	}
}

// SetupWithManager watches the EtcdBackups in scope, and their Jobs. As many backups run at once as
// --max-concurrent-reconciles says, each for its own EtcdBackup.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	name := scope.ControllerName("etcdbackup", r.ClusterWide)
	if err := status.ExportConditions(mgr, "EtcdBackup", &v1beta2.EtcdBackupList{}, scope.Filter(r.ClusterWide)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1beta2.EtcdBackup{}, builder.WithPredicates(scope.Predicate(r.ClusterWide))).
		Owns(&batchv1.Job{}). // the Jobs of backups to volumes
		Named(name).
		Complete(r)
}
