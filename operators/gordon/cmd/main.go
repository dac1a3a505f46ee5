// Command manager runs the gordon operator.
package main

import (
	"flag"

	"github.com/operator-framework/operator-lib/proxy"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/operators/gordon/config/crd"
	"github.com/quintet-operators/quintet/operators/gordon/config/prometheus"
	"github.com/quintet-operators/quintet/operators/gordon/internal/controller/gordon"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	flag.Parse()
	manager.Run("gordon", flags, newScheme(), manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring}, setup, gordon.CacheOptions)
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))
	return scheme
}

// setup adds the operator's controllers to mgr.
func setup(mgr ctrl.Manager) error {
	return (&gordon.Reconciler{
		Client:   client.WithFieldOwner(mgr.GetClient(), "gordon"),
		Recorder: mgr.GetEventRecorder("gordon-controller"),
		ProxyEnv: proxy.ReadProxyVarsFromEnv(),
	}).SetupWithManager(mgr)
}
