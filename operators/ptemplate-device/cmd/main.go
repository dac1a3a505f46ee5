// Command manager runs the ptemplate-device operator.
package main

import (
	"flag"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha "github.com/quintet-operators/quintet/operators/ptemplate-device/api/v1alpha"
	"github.com/quintet-operators/quintet/operators/ptemplate-device/config/crd"
	"github.com/quintet-operators/quintet/operators/ptemplate-device/config/prometheus"
	"github.com/quintet-operators/quintet/operators/ptemplate-device/internal/controller/ptemplate"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	flag.Parse()
	manager.Run("ptemplate-device", flags, newScheme(), manager.Assets{CRDs: crd.Bases, Monitoring: prometheus.Monitoring}, setup, ptemplate.CacheOptions)
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha.AddToScheme(scheme))
	return scheme
}

// setup adds the operator's controller to mgr.
func setup(mgr ctrl.Manager) error {
	return (&ptemplate.Reconciler{
		Client:    client.WithFieldOwner(mgr.GetClient(), "ptemplate-device"),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("ptemplate-device-controller"),
	}).SetupWithManager(mgr)
}
