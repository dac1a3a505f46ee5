// Command manager runs the etcd-cluster operator.
package main

import (
	"flag"

	"github.com/operator-framework/operator-lib/proxy"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/etcdcluster"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/controller/upgradeable"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	clusterWide := flag.Bool("cluster-wide", false,
		"Act on EtcdClusters in every namespace annotated etcd.database.coreos.com/scope=clusterwide, "+
			"instead of the unannotated ones in the watched namespaces (as the CoreOS etcd operator's -cluster-wide).")
	flag.Parse()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1beta2.AddToScheme(scheme))

	name := "etcd-cluster"
	if *clusterWide {
		name = "etcd-cluster-clusterwide" // its own leader election: both kinds may run at once
	}
	manager.Run(name, flags, scheme, func(mgr ctrl.Manager) error {
		err := (&etcdcluster.Reconciler{
			Client:      mgr.GetClient(),
			Recorder:    mgr.GetEventRecorder("etcdcluster-controller"),
			ClusterWide: *clusterWide,
			ProxyEnv:    proxy.ReadProxyVarsFromEnv(),
		}).SetupWithManager(mgr)
		if err != nil {
			return err
		}
		return upgradeable.SetupWithManager(mgr)
	})
}
