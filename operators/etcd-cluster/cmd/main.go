// Command manager runs the etcd-cluster operator.
package main

import (
	"flag"

	"github.com/operator-framework/operator-lib/proxy"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/config/crd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/upgradeable"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/membership"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	clusterWide := flag.Bool("cluster-wide", false,
		"Act on EtcdClusters in every namespace annotated etcd.database.coreos.com/scope=clusterwide, "+
			"instead of the unannotated ones in the watched namespaces (as the CoreOS etcd operator's -cluster-wide).")
	dialTimeout := flag.Duration("etcd-dial-timeout", etcd.DefaultDialTimeout, "How long to wait for a connection to a cluster's members.")
	requestTimeout := flag.Duration("etcd-request-timeout", membership.DefaultRequestTimeout,
		"How long to wait for each etcd cluster API request (member list, status, add, promote, remove).")
	flag.Parse()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1beta2.AddToScheme(scheme))

	name := "etcd-cluster"
	if *clusterWide {
		name = "etcd-cluster-clusterwide" // its own leader election: both kinds may run at once
	}
	manager.Run(name, flags, scheme, crd.Bases, func(mgr ctrl.Manager) error {
		err := (&etcdcluster.Reconciler{
			// Objects name the manager that wrote them (managedFields): the namespaced and the
			// cluster-wide manager can be told apart.
			Client:                  client.WithFieldOwner(mgr.GetClient(), name),
			APIReader:               mgr.GetAPIReader(),
			Recorder:                mgr.GetEventRecorder("etcdcluster-controller"),
			ClusterWide:             *clusterWide,
			MaxConcurrentReconciles: flags.MaxConcurrentReconciles,
			Dial:                    etcd.NewDialer(*dialTimeout),
			RequestTimeout:          *requestTimeout,
			ProxyEnv:                proxy.ReadProxyVarsFromEnv(),
		}).SetupWithManager(mgr)
		if err != nil {
			return err
		}
		return upgradeable.SetupWithManager(mgr)
	}, etcdcluster.CacheOptions)
}
