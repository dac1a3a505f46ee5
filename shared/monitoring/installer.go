package monitoring

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Set is an operator's monitoring: its name (the prefix of its objects' names) and its
// config/prometheus files.
type Set struct {
	Operator string
	Files    fs.FS
}

// DefaultInterval is how often the manager checks that its monitoring objects are in place.
const DefaultInterval = time.Minute

// serviceAccountNamespace holds the namespace of the pod the manager runs in.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Add adds an Installer of s's objects to mgr: in the manager's own namespace, owned by its
// metrics Service (<operator>-controller-manager-metrics-service, which OLM deletes with the
// CSV, so that they go with the operator).
func Add(mgr ctrl.Manager, s Set) error {
	objects, err := Objects(s.Files, s.Operator)
	if err != nil {
		return fmt.Errorf("reading the monitoring objects: %w", err)
	}
	ns, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return fmt.Errorf("--install-monitoring applies the monitoring objects in the manager's namespace, which a manager runs in a pod to know: %w", err)
	}
	return mgr.Add(&Installer{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Mapper: mgr.GetRESTMapper(),
		Namespace: strings.TrimSpace(string(ns)), Owner: s.Operator + "-controller-manager-metrics-service",
		FieldOwner: s.Operator, Objects: objects, Interval: DefaultInterval,
		Log: ctrl.Log.WithName("monitoring"),
	})
}

// Installer applies Objects in Namespace, owned by the Service Owner, by server-side apply,
// once the cluster serves every kind among them, and again every Interval: it starts within
// an Interval of prometheus-operator's CRDs being installed, and puts back an object deleted
// or changed by hand. It runs on the leader only (a manager Runnable that does not say
// otherwise).
type Installer struct {
	Client     client.Client
	Reader     client.Reader // reads the owner from the API server: the cache may not hold it
	Mapper     meta.RESTMapper
	Namespace  string
	Owner      string
	FieldOwner string
	Objects    []*unstructured.Unstructured
	Interval   time.Duration
	Log        logr.Logger

	state passState // what the last pass did: a pass logs only a change
}

type passState int

const (
	notRun  passState = iota
	waiting           // for the kinds to be served
	applied
)

// Start runs a pass every Interval until ctx ends.
func (i *Installer) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := i.Sync(ctx); err != nil && ctx.Err() == nil {
			i.Log.Error(err, "Cannot apply the monitoring objects", "retryIn", i.Interval.String())
		}
	}, i.Interval)
	return nil
}

// Sync is one pass: it applies the objects when their kinds are served, and otherwise leaves
// them alone.
func (i *Installer) Sync(ctx context.Context) error {
	missing, err := i.unservedKind()
	if err != nil {
		return err
	}
	if missing != "" {
		if i.state != waiting {
			i.Log.Info("Not applying the monitoring objects: the cluster does not serve their kind (prometheus-operator is not installed)",
				"kind", missing, "checkEvery", i.Interval.String())
		}
		i.state = waiting
		return nil
	}
	owner := &corev1.Service{}
	if err := i.Reader.Get(ctx, client.ObjectKey{Namespace: i.Namespace, Name: i.Owner}, owner); err != nil {
		return fmt.Errorf("reading Service %s/%s, which owns the monitoring objects: %w", i.Namespace, i.Owner, err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: owner.Name, UID: owner.UID}
	for _, o := range i.Objects {
		obj := o.DeepCopy()
		obj.SetNamespace(i.Namespace)
		obj.SetOwnerReferences([]metav1.OwnerReference{ref})
		if err := i.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(i.FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", obj.GetKind(), i.Namespace, obj.GetName(), err)
		}
	}
	if i.state != applied {
		i.Log.Info("Applied the monitoring objects", "namespace", i.Namespace, "objects", len(i.Objects), "owner", i.Owner)
	}
	i.state = applied
	return nil
}

// unservedKind is the first kind among the objects the cluster does not serve, if any.
func (i *Installer) unservedKind() (string, error) {
	for _, o := range i.Objects {
		gvk := o.GroupVersionKind()
		_, err := i.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			return gvk.String(), nil
		}
		if err != nil {
			return "", errors.Join(fmt.Errorf("finding whether the cluster serves %s", gvk), err)
		}
	}
	return "", nil
}
