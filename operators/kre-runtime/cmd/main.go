// Command manager runs the kre-runtime operator.
package main

import (
	"flag"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/quintet-operators/quintet/operators/kre-runtime/api/v1alpha1"
	"github.com/quintet-operators/quintet/operators/kre-runtime/config/crd"
	"github.com/quintet-operators/quintet/operators/kre-runtime/config/prometheus"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/kreruntime"
	"github.com/quintet-operators/quintet/operators/kre-runtime/internal/controller/runtimeversion"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	flag.Parse()
	manager.Run("kre-runtime", flags, newScheme(), manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring}, setup, kreruntime.CacheOptions)
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	return scheme
}

// setup adds the operator's controllers to mgr.
func setup(mgr ctrl.Manager) error {
	c := client.WithFieldOwner(mgr.GetClient(), "kre-runtime")
	recorder := mgr.GetEventRecorder("kre-runtime-controller")
	if err := (&kreruntime.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: recorder}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&runtimeversion.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: recorder}).SetupWithManager(mgr)
}
