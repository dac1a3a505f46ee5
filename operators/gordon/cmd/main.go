// Command manager runs the gordon operator.
package main

import (
	"flag"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/quintet-operators/quintet/operators/gordon/api/v1"
	"github.com/quintet-operators/quintet/operators/gordon/internal/controller/gordon"
	"github.com/quintet-operators/quintet/shared/manager"
)

func main() {
	var flags manager.Flags
	flags.Bind(flag.CommandLine)
	concurrency := flag.Int("max-concurrent-reconciles", 4, "Gordons reconciled at once.")
	flag.Parse()

	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1.AddToScheme(scheme))

	mgr, err := manager.New("gordon", flags, scheme, gordon.CacheOptions)
	if err != nil {
		ctrl.Log.Error(err, "Unable to start the manager")
		os.Exit(1)
	}
	r := &gordon.Reconciler{
		Client:                  mgr.GetClient(),
		Recorder:                mgr.GetEventRecorder("gordon-controller"),
		MaxConcurrentReconciles: *concurrency,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		ctrl.Log.Error(err, "Unable to set up the controller", "controller", "gordon")
		os.Exit(1)
	}
	ctrl.Log.Info("Starting the manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		ctrl.Log.Error(err, "The manager stopped with an error")
		os.Exit(1)
	}
}
