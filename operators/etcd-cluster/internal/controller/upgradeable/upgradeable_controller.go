// Package upgradeable tells OLM when the operator may be upgraded: its OperatorCondition's
// Upgradeable is False while any etcd cluster it manages is changing members or rolling a
// version (a new operator taking over mid-change would have to work out where the old one
// stopped), and True otherwise. OLM then holds an approved upgrade until it is True again.
package upgradeable

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	"github.com/operator-framework/operator-lib/conditions"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	quintetconditions "github.com/quintet-operators/quintet/shared/conditions"
)

// conditionNameEnv names the OperatorCondition of an operator OLM runs; OLM sets it.
const conditionNameEnv = "OPERATOR_CONDITION_NAME"

// Holds lists, sorted, the clusters that hold upgrades and what each is doing.
func Holds(clusters []v1beta2.EtcdCluster) []string {
	var holds []string
	for i := range clusters {
		c := &clusters[i]
		p := meta.FindStatusCondition(c.Status.Conditions, quintetconditions.ProgressingCondition)
		// Progressing is True exactly while a cluster is mid-operation (bootstrapping,
		// scaling, promoting, replacing, restarting, recovering, upgrading).
		if p != nil && p.Status == metav1.ConditionTrue {
			holds = append(holds, fmt.Sprintf("%s/%s: %s", c.Namespace, c.Name, p.Reason))
		}
	}
	slices.Sort(holds)
	return holds
}

// Condition is the Upgradeable condition for the holds.
func Condition(holds []string) metav1.Condition {
	if len(holds) == 0 {
		return metav1.Condition{Type: apiv2.Upgradeable, Status: metav1.ConditionTrue, Reason: v1beta2.ReasonNoMembershipChange,
			Message: "no etcd cluster is changing members or versions"}
	}
	shown := holds[:min(len(holds), 3)]
	message := "etcd clusters mid-operation: " + strings.Join(shown, ", ")
	if more := len(holds) - len(shown); more > 0 {
		message += fmt.Sprintf(" and %d more", more)
	}
	return metav1.Condition{Type: apiv2.Upgradeable, Status: metav1.ConditionFalse, Reason: v1beta2.ReasonMembershipChanging, Message: message}
}

// Reconciler keeps the OperatorCondition's Upgradeable in line with the clusters. It has one
// key: every cluster event, and the start, recompute the condition from the cache.
type Reconciler struct {
	client.Client
	// Condition writes Upgradeable to the operator's OperatorCondition.
	Condition conditions.Condition
	last      *metav1.Condition
}

// +kubebuilder:rbac:groups=etcd.database.coreos.com,resources=etcdclusters,verbs=get;list;watch

// Reconcile writes Upgradeable when it changed since the last write.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	list := &v1beta2.EtcdClusterList{}
	if err := r.List(ctx, list); err != nil {
		return ctrl.Result{}, err
	}
	want := Condition(Holds(list.Items))
	if r.last != nil && r.last.Status == want.Status && r.last.Message == want.Message {
		return ctrl.Result{}, nil
	}
	if err := r.Condition.Set(ctx, want.Status, conditions.WithReason(want.Reason), conditions.WithMessage(want.Message)); err != nil {
		return ctrl.Result{}, fmt.Errorf("setting the OperatorCondition's Upgradeable: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("OperatorCondition Upgradeable set", "status", want.Status, "message", want.Message)
	r.last = &want
	return ctrl.Result{}, nil
}

// key is the controller's only request.
var key = reconcile.Request{NamespacedName: types.NamespacedName{Name: "upgradeable"}}

// SetupWithManager registers the controller when OLM runs the operator (its OperatorCondition
// is named in the environment); otherwise there is nothing to tell and it logs so.
func SetupWithManager(mgr ctrl.Manager) error {
	log := mgr.GetLogger().WithName("upgradeable")
	if os.Getenv(conditionNameEnv) == "" {
		log.Info("not run by OLM (" + conditionNameEnv + " is unset): no OperatorCondition to report Upgradeable to")
		return nil
	}
	// OLM lets the operator get and update its own OperatorCondition, by name: an uncached
	// client, as a cache would list and watch them all.
	scheme := runtime.NewScheme()
	if err := apiv2.AddToScheme(scheme); err != nil {
		return err
	}
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	cond, err := conditions.InClusterFactory{Client: direct}.NewCondition(apiv2.ConditionType(apiv2.Upgradeable))
	if err != nil {
		return err
	}
	start := make(chan event.GenericEvent, 1)
	start <- event.GenericEvent{Object: &v1beta2.EtcdCluster{}} // a first pass, also with no cluster at all
	toKey := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return []reconcile.Request{key} })
	return ctrl.NewControllerManagedBy(mgr).
		Named("upgradeable").
		Watches(&v1beta2.EtcdCluster{}, toKey).
		WatchesRawSource(source.Channel(start, toKey)).
		Complete(&Reconciler{Client: mgr.GetClient(), Condition: cond})
}
