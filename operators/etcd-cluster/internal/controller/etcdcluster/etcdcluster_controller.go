// Package etcdcluster reconciles EtcdClusters: the Services, PodDisruptionBudget,
// NetworkPolicy and StatefulSet of a cluster, and its membership, changed through etcd's cluster API one
// member at a time by the membership engine.
package etcdcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/scope"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/conditions"
	"github.com/quintet-operators/quintet/shared/ensure"
	"github.com/quintet-operators/quintet/shared/labelled"
	"github.com/quintet-operators/quintet/shared/optionalkind"
	"github.com/quintet-operators/quintet/shared/pods"
	"github.com/quintet-operators/quintet/shared/status"
)

// How often a pass looks again: soon while membership changes, less often when stable
// (member health is only learnt by asking). A cluster none of whose members answers is asked
// again after requeueUnreachable, then less often the longer none has answered, up to
// requeueUnreachableMax: a change of its pods (a member turning ready) starts a pass anyway,
// and a thousand clusters that do not answer must not keep every worker busy asking.
const (
	requeueChanging       = 5 * time.Second
	requeueUnreachable    = 15 * time.Second
	requeueUnreachableMax = 2 * time.Minute
	requeueStable         = 30 * time.Second
)

// Reconciler runs etcd clusters.
type Reconciler struct {
	client.Client
	// APIReader reads from the API server, not the cache (which holds only the objects labelled
	// for a cluster): it tells an object of someone else's from one the cache has not seen yet.
	// The Client when nil.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// ClusterWide: act only on clusters annotated etcd.database.coreos.com/scope=clusterwide
	// (in any namespace). Otherwise act only on clusters without that annotation.
	ClusterWide bool
	// DialTimeout bounds connecting to a cluster's members; etcd.DefaultDialTimeout when zero.
	DialTimeout time.Duration
	// RequestTimeout bounds each etcd request; membership.DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// Addresses is the address scheme of members; DNSAddresses when nil.
	Addresses func(*v1beta2.EtcdCluster) membership.Addresses
	// Outages remembers, across passes, since when members have been unreachable.
	Outages membership.Outages
	// ProxyEnv are the cluster's proxy settings OLM gives the manager (HTTP_PROXY, HTTPS_PROXY,
	// NO_PROXY), passed on to every member.
	ProxyEnv []corev1.EnvVar
	// OperatorImage is the manager's own image: the first member of a cluster with
	// spec.restore runs it to restore the snapshot (etcd-snapshot restore-member).
	OperatorImage string
	// ManagerNamespace is the namespace the manager runs in: members' NetworkPolicies let its
	// pods (ManagerPodLabels) there reach the client port. Empty when the manager runs outside
	// the cluster; it then reaches members from a node.
	ManagerNamespace string
	// S3 is where the manager may connect to check a spec.restore snapshot in its store.
	S3 backup.Reach
	// ClusterIssuers are the cert-manager ClusterIssuers clusters may name: any other one is
	// refused (IssuerNotAllowed), as its CA may be one that other namespaces' clusters trust.
	ClusterIssuers []string

	// CertManager watches the Certificates clusters own once cert-manager is installed.
	CertManager *optionalkind.Watch

	transitions conditions.Transitions
	// checked remembers the Services found as wanted: the cache holds Services as metadata.
	checked *ensure.CheckedVersions
}

// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=pods;persistentvolumeclaims,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cert-manager.io,resources=issuers;clusterissuers,verbs=get

// Reconcile brings one etcd cluster towards its spec and reports what it sees.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	c := &v1beta2.EtcdCluster{}
	if err := r.Get(ctx, req.NamespacedName, c); err != nil {
		if apierrors.IsNotFound(err) {
			r.transitions.Forget(req.Namespace, req.Name)
			forgetClusterMetrics(req.NamespacedName)
			r.Outages.Forget(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !scope.Manages(c, r.ClusterWide) || !c.DeletionTimestamp.IsZero() {
		// Another operator's cluster, or one going away with everything it owns.
		return ctrl.Result{}, nil
	}
	patcher := status.NewPatcher(c, status.WithEvents(r.Recorder, &r.transitions, conditions.DegradedCondition, v1beta2.CertificateExpiringCondition))
	leaderBefore := c.Status.LeaderID
	defer func() {
		res, reterr = patcher.Finish(ctx, r.Client, c, res, reterr)
		recordClusterMetrics(c, leaderBefore)
	}()
	ctx, changes := ensure.WithChangeSet(ctx) // one Event per reason of what the pass wrote
	defer changes.Record(r.Recorder, c)
	return r.reconcileNormal(ctx, c)
}

// reader reads from the API server.
func (r *Reconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

func (r *Reconciler) reconcileNormal(ctx context.Context, c *v1beta2.EtcdCluster) (ctrl.Result, error) {
	r.warnEvenSize(c)
	version, upgradeErr := imageVersion(c)
	var step membership.Step
	var report membership.Report
	var engine *membership.Engine
	tlsRun, err := r.reconcileTLS(ctx, c)
	if err == nil {
		template := memberTemplate{version: version, tlsSecret: tlsRun.secret, proxyEnv: r.ProxyEnv, restoreImage: r.OperatorImage}
		engine = r.engine(c, template, tlsRun.dial)
		step, report, err = r.reconcileMembers(ctx, c, engine, template, tlsRun)
	}
	_, isNotOwned := ensure.IsNotOwned(err)
	switch {
	case isNotOwned:
		// Waits for the user, who may delete the object at any time: look again now and then.
		setBlocked(c, err)
		return ctrl.Result{RequeueAfter: requeueStable}, nil
	case errors.Is(err, reconcile.TerminalError(nil)):
		setBlocked(c, err)
		return ctrl.Result{}, err
	case err != nil && report.Observed.Workload == nil:
		// Nothing observed: retried with backoff, status as it was; not in a namespace being
		// deleted, which refuses what a pass makes and takes the cluster too.
		return ensure.ResultOf(err)
	case err != nil:
		// What the pass saw is still true: the status says it, and that the step failed; it
		// is retried with back-off.
		oc := outcome{report: report, step: step, upgradeErr: upgradeErr, stepErr: err, tls: tlsRun, now: time.Now()}
		setStatus(c, oc, r.addresses(c))
		recordAlarms(c, report)
		if e, ok := restoreFailure(oc); ok && e.Reason != v1beta2.ReasonSnapshotCorrupt {
			// Waits for the user (a Secret, an object, a bucket): look again soon, without
			// backing off. A corrupt snapshot backs off: each look reads it whole.
			return ctrl.Result{RequeueAfter: requeueUnreachable}, nil
		}
		return ctrl.Result{}, err
	}
	r.recordStep(ctx, c, step)
	now := time.Now()
	setStatus(c, outcome{report: report, step: step, upgradeErr: upgradeErr, tls: tlsRun, now: now}, r.addresses(c))
	recordAlarms(c, report)
	requeue := requeueAfter(c, step, report, now)
	if conditions.IsTrue(c, conditions.ReadyCondition) && !c.Spec.Paused {
		// Only a Ready cluster is defragmented: every member a healthy voter, nothing changing.
		after, err := r.reconcileDefragmentation(ctx, c, engine, report, now)
		if err != nil {
			return ctrl.Result{}, err
		}
		requeue = min(requeue, after)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// reconcileMembers keeps the cluster's objects current and takes one membership step; a
// paused cluster, or one whose certificates cannot be used, is only observed.
func (r *Reconciler) reconcileMembers(ctx context.Context, c *v1beta2.EtcdCluster, engine *membership.Engine,
	template memberTemplate, tlsRun tlsState) (membership.Step, membership.Report, error) {
	if c.Spec.Paused {
		report, err := engine.Observe(ctx)
		return membership.Step{Action: actionPaused, Reason: "spec.paused is true: the operator changes nothing"}, report, err
	}
	if tlsRun.err != nil {
		report, err := engine.Observe(ctx)
		held := "members keep the certificates they run with; nothing changes until spec.TLS names usable ones"
		if tlsRun.issuing() {
			held = tlsRun.err.Error()
		}
		return membership.Step{Action: actionHeld, Reason: held}, report, err
	}
	for _, obj := range []client.Object{peerService(c), clientService(c), podDisruptionBudget(c)} {
		if err := r.ensure(ctx, c, obj); err != nil {
			return membership.Step{}, membership.Report{}, err
		}
	}
	if err := r.reconcileNetworkPolicy(ctx, c); err != nil {
		return membership.Step{}, membership.Report{}, err
	}
	step, report, err := engine.Reconcile(ctx, int(c.Spec.Size))
	if err != nil {
		return step, report, err
	}
	// After the engine recorded which volume holds which member's data, before the
	// members restart onto it, one at a time.
	return step, report, r.reconcileTemplate(ctx, c, report.Observed.Workloads, template)
}

// reconcileTemplate keeps an existing StatefulSet's pod template (image, policy) current
// without touching its replicas, which only membership changes move.
func (r *Reconciler) reconcileTemplate(ctx context.Context, c *v1beta2.EtcdCluster, workloads int, template memberTemplate) error {
	if workloads == 0 {
		return nil
	}
	sts := &appsv1.StatefulSet{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(c), sts); err != nil {
		return client.IgnoreNotFound(err)
	}
	return r.ensure(ctx, c, statefulSet(c, ptr.Deref(sts.Spec.Replicas, 1), template))
}

// engine changes the membership of c, its members starting from template, the operator's
// client dialling with tlsConfig (nil: plain HTTP).
func (r *Reconciler) engine(c *v1beta2.EtcdCluster, template memberTemplate, tlsConfig *tls.Config) *membership.Engine {
	dialTimeout := r.DialTimeout
	if dialTimeout == 0 {
		dialTimeout = etcd.DefaultDialTimeout
	}
	replaceAfter := 10 * time.Minute
	if c.Spec.ReplaceUnreachableAfter != nil {
		replaceAfter = c.Spec.ReplaceUnreachableAfter.Duration
	}
	return &membership.Engine{Dial: etcd.NewDialer(dialTimeout, tlsConfig), Addr: r.addresses(c), RequestTimeout: r.RequestTimeout,
		Runner:  &statefulSetRunner{r: r, c: c, template: template},
		Outages: &r.Outages, Key: client.ObjectKeyFromObject(c).String(), ReplaceAfter: replaceAfter}
}

func (r *Reconciler) addresses(c *v1beta2.EtcdCluster) membership.Addresses {
	if r.Addresses != nil {
		return r.Addresses(c)
	}
	return DNSAddresses(c)
}

// imageVersion is the version members run: the spec's, unless the move from the running
// version is not a supported path; then the running one, with the reason.
func imageVersion(c *v1beta2.EtcdCluster) (string, error) {
	if err := checkUpgrade(c.Status.CurrentVersion, c.Spec.Version); err != nil {
		return c.Status.CurrentVersion, err
	}
	return c.Spec.Version, nil
}

func (r *Reconciler) warnEvenSize(c *v1beta2.EtcdCluster) {
	if c.Generation != c.Status.ObservedGeneration && c.Spec.Size%2 == 0 {
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, v1beta2.ReasonEvenSize, "Validate",
			"size %d tolerates no more member failures than size %d", c.Spec.Size, c.Spec.Size-1)
	}
}

// recordStep logs and emits an Event for each membership change; a refused change is
// reported once, through the Degraded condition's Event.
func (r *Reconciler) recordStep(ctx context.Context, c *v1beta2.EtcdCluster, step membership.Step) {
	switch step.Action {
	case membership.ActionBootstrap, membership.ActionRecover, membership.ActionAdd, membership.ActionPromote,
		membership.ActionRemove, membership.ActionReplace, membership.ActionWipe, membership.ActionRestart:
		ctrl.LoggerFrom(ctx).Info("Changing membership", "action", step.Action, "member", step.Ordinal, "reason", step.Reason)
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, string(step.Action), string(step.Action), "Member %d: %s", step.Ordinal, step.Reason)
	}
}

func requeueAfter(c *v1beta2.EtcdCluster, step membership.Step, report membership.Report, now time.Time) time.Duration {
	switch {
	case step.Action == membership.ActionAwaitVolumes:
		return requeueChanging // the garbage collector's deletion wakes nothing
	case !report.Observed.Reachable:
		return unreachableRequeue(c, now)
	case step.Action == membership.ActionNone || step.Action == actionPaused || step.Action == actionHeld:
		return requeueStable
	default:
		return requeueChanging
	}
}

// unreachableRequeue is half the time since no member of c answers (Degraded with
// MembersUnreachable, as the pass's status says), from requeueUnreachable to
// requeueUnreachableMax.
func unreachableRequeue(c *v1beta2.EtcdCluster, now time.Time) time.Duration {
	degraded := conditions.Get(c, conditions.DegradedCondition)
	if degraded == nil || degraded.Reason != v1beta2.ReasonMembersUnreachable {
		return requeueUnreachable
	}
	return min(requeueUnreachableMax, max(requeueUnreachable, now.Sub(degraded.LastTransitionTime.Time)/2))
}

// SetupWithManager watches the clusters in scope and the objects they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	name := scope.ControllerName("etcdcluster", r.ClusterWide)
	if err := status.ExportConditions(mgr, "EtcdCluster", &v1beta2.EtcdClusterList{}, scope.Filter(r.ClusterWide)); err != nil {
		return err
	}
	r.checked = ensure.NewCheckedVersions(&corev1.Service{})
	c, err := ctrl.NewControllerManagedBy(mgr).
		// Not on a change of the status alone: the pass writes it, and a member's database
		// size in it changes under writes, so each pass would start the next at once (and a
		// pass that keeps failing would run its back-off up to 16 minutes within seconds).
		For(&v1beta2.EtcdCluster{}, builder.WithPredicates(scope.Predicate(r.ClusterWide), predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}, builder.OnlyMetadata).
		Owns(&policyv1.PodDisruptionBudget{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Owns(&batchv1.Job{}). // the Job that restores a first member from a volume
		// A member pod made behind its gate waits for a pass to start it; a Secret cert-manager
		// writes (labelled for the cluster, not owned by it) holds renewed certificates.
		Watches(&corev1.Pod{}, labelled.ToOwner(v1beta2.ClusterLabel)).
		Watches(&corev1.Secret{}, labelled.ToOwner(v1beta2.ClusterLabel)).
		Named(name).
		Build(r)
	if err != nil {
		return err
	}
	r.CertManager = optionalkind.Owned(mgr, c, certificateGVK, &v1beta2.EtcdCluster{})
	return nil
}

// CacheOptions narrows the manager's cache of the kinds a cluster owns to objects labelled
// etcd_cluster (every object the operator makes, and the claims of its StatefulSets), so
// its memory follows the etcd clusters, not every Pod, claim or Service in the cluster. Of a
// member pod's spec it keeps what the operator reads: its node, its scheduling gates (the
// start gate) and its volumes (the TLS Secret it mounts); of its StatefulSet, no pod or claim
// template, and of its cert-manager Certificates no spec (ensure.SpecsOutOfCache). Of its
// Services it keeps the metadata alone (the watch is builder.OnlyMetadata, and
// ensure.CheckedVersions says when one must be read whole).
func CacheOptions(o *ctrl.Options) {
	labelled.CacheOnly(labelled.Exists(v1beta2.ClusterLabel), &corev1.Pod{}, &corev1.PersistentVolumeClaim{},
		&corev1.Service{}, &appsv1.StatefulSet{}, &policyv1.PodDisruptionBudget{}, &networkingv1.NetworkPolicy{}, &corev1.Secret{})(o)
	pods.TrimInCache(func(p *corev1.Pod) {
		p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName, SchedulingGates: p.Spec.SchedulingGates, Volumes: p.Spec.Volumes}
	})(o)
	ensure.SpecsOutOfCache(o)
}
