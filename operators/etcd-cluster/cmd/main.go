// Command manager runs the etcd-cluster operator.
package main

import (
	"flag"
	"os"
	"strings"
	"time"

	"github.com/operator-framework/operator-lib/proxy"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/config/crd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/config/prometheus"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdbackup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdrestore"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/upgradeable"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/jobs"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/manager"
)

// options are the flags of this operator's own.
type options struct {
	clusterWide    bool
	dialTimeout    time.Duration
	requestTimeout time.Duration
}

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	var o options
	flag.BoolVar(&o.clusterWide, "cluster-wide", false,
		"Act on EtcdClusters in every namespace annotated etcd.database.coreos.com/scope=clusterwide, "+
			"instead of the unannotated ones in the watched namespaces (as the CoreOS etcd operator's -cluster-wide).")
	flag.DurationVar(&o.dialTimeout, "etcd-dial-timeout", etcd.DefaultDialTimeout, "How long to wait for a connection to a cluster's members.")
	flag.DurationVar(&o.requestTimeout, "etcd-request-timeout", membership.DefaultRequestTimeout,
		"How long to wait for each etcd cluster API request (member list, status, add, promote, remove).")
	flag.Parse()
	assets := manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring}
	manager.Run(o.name(), flags, newScheme(), assets, o.setup, etcdcluster.CacheOptions, jobs.CacheOptions)
}

// name is the manager's: the cluster-wide one has its own leader election, as both kinds may
// run at once.
func (o options) name() string {
	if o.clusterWide {
		return "etcd-cluster-clusterwide"
	}
	return "etcd-cluster"
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1beta2.AddToScheme(scheme))
	return scheme
}

// serviceAccountNamespace is where a pod's service account token says its namespace is.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// managerNamespace is the namespace the manager's pod runs in: POD_NAMESPACE (config/manager
// sets it from the downward API), else its service account's; empty outside a cluster.
func managerNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	data, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// setup adds the operator's controllers to mgr.
func (o options) setup(mgr ctrl.Manager) error {
	err := (&etcdcluster.Reconciler{
		// Objects name the manager that wrote them (managedFields): the namespaced and the
		// cluster-wide manager can be told apart.
		Client:         client.WithFieldOwner(mgr.GetClient(), o.name()),
		APIReader:      mgr.GetAPIReader(),
		Recorder:       mgr.GetEventRecorder("etcdcluster-controller"),
		ClusterWide:    o.clusterWide,
		DialTimeout:    o.dialTimeout,
		RequestTimeout: o.requestTimeout,
		ProxyEnv:       proxy.ReadProxyVarsFromEnv(),
		OperatorImage:  os.Getenv("OPERATOR_IMAGE"),
		// Members' NetworkPolicies let the manager's pods of this namespace in.
		ManagerNamespace: managerNamespace(),
	}).SetupWithManager(mgr)
	if err != nil {
		return err
	}
	err = (&etcdbackup.Reconciler{
		Client:        client.WithFieldOwner(mgr.GetClient(), o.name()),
		APIReader:     mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorder("etcdbackup-controller"),
		ClusterWide:   o.clusterWide,
		DialTimeout:   o.dialTimeout,
		OperatorImage: os.Getenv("OPERATOR_IMAGE"),
	}).SetupWithManager(mgr)
	if err != nil {
		return err
	}
	err = (&etcdrestore.Reconciler{
		Client:      client.WithFieldOwner(mgr.GetClient(), o.name()),
		Recorder:    mgr.GetEventRecorder("etcdrestore-controller"),
		ClusterWide: o.clusterWide,
	}).SetupWithManager(mgr)
	if err != nil {
		return err
	}
	return upgradeable.SetupWithManager(mgr)
}
